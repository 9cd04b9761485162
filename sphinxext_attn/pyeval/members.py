"""Class members: the method resolution order and what a class body binds.

A class's own attribute is what its body binds as Python runs it (the block
that runs; loops and the like are unknown, see :func:`.scope.index_bindings`),
unless module-level code set it after the class statement (:mod:`.attrsets`);
then the bases in C3 order. What Python's own machinery adds (``__mro__``, a
named tuple's ``_replace``) is unknown rather than missing.
"""

from __future__ import annotations

import ast
import builtins
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval import ops, plain
from sphinxext_attn.pyeval.attrsets import set_after_class, value_set
from sphinxext_attn.pyeval.bindings import index_bindings, live_binding
from sphinxext_attn.pyeval.lazyclass import LazyBody, position, statements_for
from sphinxext_attn.pyeval.mutations import changed_in_class_body
from sphinxext_attn.pyeval.scope import MISSING, cached, remember
from sphinxext_attn.pyeval.values import (
    CAPABILITY,
    Builtin,
    EnumMember,
    External,
    Instance,
    PyClass,
    Raised,
    Unknown,
    Value,
    line_of,
)

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.bindings import Binding
    from sphinxext_attn.pyeval.interp import Interpreter
    from sphinxext_attn.pyeval.scope import ModuleScope, Scope

ENUM_BASES = frozenset({"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag"})
#: Class decorators of the standard library that add no member a question reads.
CLASS_DECORATORS = frozenset(
    {
        "dataclasses.dataclass",
        "typing.final",
        "typing_extensions.final",
        "typing.runtime_checkable",
        "typing_extensions.runtime_checkable",
        "functools.total_ordering",
        "enum.unique",
    }
)


def is_enum_member_name(name: str, class_name: str) -> bool:
    """Whether an enum body's name is a member as Python's ``enum`` (3.11) decides:
    dunders, ``_sunder_`` names and private names (``__x``, which the compiler mangles
    to ``_Cls__x``) are not; ``_310P`` and ``___`` are."""
    if name.startswith("__") and not name.endswith("__") and class_name.strip("_"):
        name = f"_{class_name.lstrip('_')}{name}"  # mangled as the compiler does
    dunder = len(name) > 4 and name[:2] == name[-2:] == "__" and name[2] != "_" != name[-3]
    sunder = len(name) > 2 and name[0] == name[-1] == "_" and name[1] != "_" != name[-2]
    pattern = f"_{class_name}__"
    private = len(name) > len(pattern) and name.startswith(pattern) and name[-2:] != "__"
    return not (dunder or sunder or private)


#: Metaclasses of the standard library that add no member a question reads.
METACLASSES = frozenset({"abc.ABCMeta", "enum.EnumMeta", "enum.EnumType"})
NAMEDTUPLE_BASES = frozenset({"typing.NamedTuple", "typing_extensions.NamedTuple"})
#: Builtin types the evaluator knows by name (for ``isinstance`` and conversions).
PLAIN_TYPES: dict[str, type] = {
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "list": list,
    "tuple": tuple,
    "dict": dict,
    "set": set,
    "frozenset": frozenset,
}


def _bases(interp: Interpreter, cls: PyClass) -> list[Value]:
    if cls.bases_cache is None:
        bases: list[Value] = []
        scope = cls.scope
        for expr in cls.node.bases:
            if isinstance(expr, ast.Subscript):
                expr = expr.value  # Generic[T], AttentionMetadataBuilder[M]
            try:
                base = interp.eval(expr, scope)
            except (Unknown, RecursionError):
                base = External("<unknown base>")
            if isinstance(base, Builtin) and base.name in PLAIN_TYPES:
                base = External(f"builtins.{base.name}")
            bases.append(base)
        cls.bases_cache = bases
    return cls.bases_cache


def class_mro(cls: PyClass, interp: Interpreter) -> list[Value]:
    """C3 linearisation over tree classes; bases from outside the tree are kept
    as :class:`External` entries (``enum.Enum``, ``builtins.str``)."""
    if cls.mro_cache is not None:
        return cls.mro_cache
    cls.mro_cache = [cls]  # a cycle in the bases ends here
    try:
        bases = _bases(interp, cls)
        seqs = [class_mro(b, interp) if isinstance(b, PyClass) else [b] for b in bases]
    except BaseException:
        # a base that raises raises again when asked again, never a class without it
        cls.mro_cache = None
        raise
    seqs.append(list(bases))
    result: list[Value] = [cls]
    while any(seqs):
        for seq in seqs:
            if not seq:
                continue
            head = seq[0]
            if not any(head in s[1:] for s in seqs if s):
                break
        else:  # CPython refuses to make the class: so does every question about it
            cls.mro_cache = None
            raise Raised("TypeError", plain.no_mro(bases))
        result.append(head)
        seqs = [s[1:] if s and s[0] == head else s for s in seqs]
    cls.mro_cache = result
    return result


#: parts of one value walked by :func:`share` at most
SHARE_LIMIT = 10_000


def share(interp: Interpreter, value: Value) -> None:
    """Note the mutable parts of a value a module or class binds: changing one
    later (``REGISTRY.append(x)``) changes what remembered answers read."""
    if interp.shared_ids is None:
        interp.shared_ids = set()
    todo, seen = [value], 0
    while todo and seen < SHARE_LIMIT:
        item = todo.pop()
        seen += 1
        if isinstance(item, list | set | dict | Instance) and id(item) not in interp.shared_ids:
            interp.shared_ids.add(id(item))
            if isinstance(item, dict):
                todo += [*item.keys(), *item.values()]
            elif isinstance(item, Instance):
                todo += item.fields.values()
            else:
                todo += item
        elif isinstance(item, tuple):
            todo += item


def mutated(interp: Interpreter, target: Value, added: Value = ()) -> None:
    """``target`` changed: remembered answers that read it are stale if a module
    or class value holds it (what it now holds is shared too)."""
    if interp.shared_ids is not None and id(target) in interp.shared_ids:
        interp.class_writes += 1
        for value in added:
            share(interp, value)


def rebind_global(interp: Interpreter, module: ModuleScope, name: str, value: Value) -> None:
    """A function's ``global name; name = value``: the module's name is ``value``
    from now on (as a class attribute set, remembered answers that read it are
    stale), whatever it was when the module ran."""
    remember(module.values, name, interp, value)
    facts = interp.capability_read & ~CAPABILITY  # what this call read so far
    if facts:
        interp.fact_masks[id(module.values), name] = facts
    else:
        interp.fact_masks.pop((id(module.values), name), None)
    share(interp, value)
    interp.class_writes += 1


def defines(interp: Interpreter, cls: PyClass, *names: str) -> str | None:
    """The first of ``names`` that ``cls`` or a base in the tree defines (dunders
    such as ``__bool__``: where Python would run one, an answer depends on it)."""
    return next((n for n in names if class_attr(interp, cls, n)[0] is not MISSING), None)


def is_enum(interp: Interpreter, cls: PyClass) -> bool:
    return any(
        isinstance(c, External) and c.qualname in ENUM_BASES for c in class_mro(cls, interp)
    )


def is_namedtuple(interp: Interpreter, cls: PyClass) -> bool:
    return any(
        isinstance(c, External) and c.qualname in NAMEDTUPLE_BASES for c in class_mro(cls, interp)
    )


def class_own_attr(interp: Interpreter, cls: PyClass, name: str) -> Value:
    """An attribute defined in ``cls``'s own body (or set on it), evaluated once."""
    found = cached(cls.attrs, name, interp)
    if found is not MISSING:
        return found
    settings = set_after_class(interp, cls, name)
    if settings:  # set by module-level code after the class statement: it wins
        return remember(cls.attrs, name, interp, lambda: value_set(interp, cls, settings))
    index = interp._class_index.get(id(cls.node))
    if isinstance(cls.node.body, LazyBody) and not cls.node.body.loaded:
        walrus = ":=" in cls.node.body.chunk.text
        index = index_bindings(statements_for(cls.node, name), True, walrus)
    elif index is None:
        walrus = cls.module.has_walrus
        index = interp._class_index[id(cls.node)] = index_bindings(cls.node.body, True, walrus)
    bindings = index.get(name)
    if not bindings:
        return MISSING
    scope = interp.class_body_scope(cls)
    if bindings[-1].guards:  # bound inside ``if``/``try``: the block that runs
        return remember(cls.attrs, name, interp, lambda: _live(interp, cls, bindings, name, scope))
    stmt = bindings[-1].stmt
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
        return remember(cls.attrs, name, interp, interp.make_function(stmt, scope, owner=cls))
    return remember(cls.attrs, name, interp, lambda: _class_value(interp, cls, stmt, name, scope))


def _live(
    interp: Interpreter, cls: PyClass, bindings: list[Binding], name: str, scope: Scope
) -> Value:
    """The member the class body's blocks bind (MISSING: none runs; a base has it)."""
    binding = live_binding(bindings, interp, scope, cls.path)
    stmt = binding.stmt if binding is not None else None
    if stmt is None:
        return MISSING
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
        return interp.make_function(stmt, scope, owner=cls)
    return _class_value(interp, cls, stmt, name, scope)


def _class_value(
    interp: Interpreter, cls: PyClass, stmt: ast.stmt, name: str, scope: Scope
) -> Value:
    value = interp.bind_statement(stmt, name, scope)
    container = isinstance(value, list | dict | set)
    if isinstance(stmt, ast.Assign | ast.AnnAssign) and (
        container or (isinstance(value, Instance) and value.items is None)
    ):
        body = cls.node.body
        if isinstance(body, LazyBody):  # ``items = []; items.append(1)``: after it, too
            later = body.run_after(stmt.lineno, name, stmt.col_offset)
        else:
            later = [s for s in body if position(s) > position(stmt)]
        line = changed_in_class_body(later, name, container)
        if line:
            raise Unknown(f"{cls.name}.{name} is changed in the class body", cls.path, line)
    if is_enum(interp, cls) and is_enum_member_name(name, cls.name):
        alias = _alias_of(interp, cls, name, value)
        if alias is not None:
            return alias
        value = EnumMember(cls, name, value, plain.plain_enum_class(class_mro(cls, interp)))
    return value


def member_names(cls: PyClass, enum: bool = False) -> list[str]:
    """Public names a class body assigns (a constants class's), or an enum's members
    (``enum``: ``_310P`` is one, as Python has it)."""
    names = []
    for stmt in cls.node.body:
        if isinstance(stmt, ast.Assign):
            names += [t.id for t in stmt.targets if isinstance(t, ast.Name)]
        elif (
            isinstance(stmt, ast.AnnAssign)
            and stmt.value is not None
            and isinstance(stmt.target, ast.Name)
        ):
            names.append(stmt.target.id)
    if enum:
        return [n for n in names if is_enum_member_name(n, cls.name)]
    return [n for n in names if not n.startswith("_")]


def _is_auto(value: Value) -> bool:
    return isinstance(value, External) and value.qualname == "enum.auto()"


def _alias_of(interp: Interpreter, cls: PyClass, name: str, value: Value) -> EnumMember | None:
    """The earlier member whose value equals ``value``: Python's enum makes ``name``
    an alias of it (``E.B is E.A``). ``auto()`` values are taken as distinct."""
    if _is_auto(value):
        return None
    for earlier in member_names(cls, enum=True):
        if earlier == name:
            break
        member = class_own_attr(interp, cls, earlier)
        if (
            isinstance(member, EnumMember)
            and member.name == earlier
            and not _is_auto(member.value)
            and ops.equal(member.value, value, interp.budget, (cls.path, cls.node.lineno))
        ):
            return member
    return None


def class_attr(
    interp: Interpreter, cls: PyClass, name: str, after: PyClass | None = None
) -> tuple[Value, Value]:
    """(value, defining class) along the MRO, starting after ``after`` if given."""
    mro = class_mro(cls, interp)
    if after is not None:
        mro = mro[mro.index(after) + 1 :] if after in mro else []
    for klass in mro:
        if isinstance(klass, PyClass):
            value = class_own_attr(interp, klass, name)
            if value is not MISSING:
                return value, klass
        elif isinstance(klass, External) and klass.qualname == "<unknown base>":
            raise Unknown(
                f"{cls.name} has a base class that could not be resolved",
                cls.path,
                cls.node.lineno,
            )
    return MISSING, None


#: bases from outside the tree that give a class or its instances no attribute
PLAIN_BASES = frozenset({"abc.ABC", "typing.Generic", "builtins.object", "typing.Protocol"})


def outside_base(interp: Interpreter, cls: PyClass, name: str | None = None) -> str:
    """The first base of ``cls`` from outside the tree that may give its instances
    attributes (a builtin exception, ``NamedTuple``), or ""; with ``name``, only
    one that may give that attribute (:func:`_may_give`)."""
    for klass in class_mro(cls, interp):
        if not isinstance(klass, External) or klass.qualname in PLAIN_BASES:
            continue
        if name is None or _may_give(klass.qualname, name):
            return klass.qualname
    return ""


def _may_give(qualname: str, name: str) -> bool:
    """Whether instances of a subclass of an outside base may get ``name`` from it:
    a named tuple's only from ``tuple`` (its ``_`` API is :func:`unmodelled`), a
    builtin class's (an exception's ``args``) as this Python's has it; any other
    base may give anything."""
    if qualname in NAMEDTUPLE_BASES:
        return hasattr(tuple, name)
    module, _, attr = qualname.partition(".")
    known = getattr(builtins, attr, None) if module == "builtins" else None
    return hasattr(known, name) if isinstance(known, type) else True


def unmodelled(interp: Interpreter, cls: PyClass, name: str, node: ast.AST) -> None:
    """Unknown for what Python's own machinery gives a class the tree does not
    define: dunders (``__mro__``, ``__dict__``) and a named tuple's ``_`` API."""
    dunder = name.startswith("__") and name.endswith("__")
    if dunder or (name.startswith("_") and is_namedtuple(interp, cls)):
        line = line_of(node) or cls.node.lineno
        raise Unknown(f"{cls.name}.{name} (Python's own) not evaluated", cls.path, line)
    for klass in class_mro(cls, interp):
        if isinstance(klass, PyClass):
            why = _adds_members(interp, klass, cls)
            if why:
                raise Unknown(
                    f"{klass.name} {why} that is not evaluated (it may add {name})",
                    klass.path,
                    klass.node.lineno,
                )
            for decorator in klass.node.decorator_list:
                if not _keeps_members(interp, klass, decorator):
                    raise Unknown(
                        f"{klass.name} has a class decorator that is not evaluated "
                        f"(it may add {name})",
                        klass.path,
                        decorator.lineno,
                    )


def _adds_members(interp: Interpreter, klass: PyClass, cls: PyClass) -> str:
    """What in ``klass`` may give ``cls`` members its body does not bind: a
    base's ``__init_subclass__``, or a metaclass other than ABCMeta/EnumMeta."""
    if klass is not cls and class_own_attr(interp, klass, "__init_subclass__") is not MISSING:
        return "has an __init_subclass__"
    for keyword in klass.node.keywords:
        if keyword.arg == "metaclass":
            try:
                meta = interp.eval(keyword.value, klass.scope)
            except (Unknown, RecursionError):
                meta = None
            if not (isinstance(meta, External) and meta.qualname in METACLASSES):
                return "has a metaclass"
    return ""


def _keeps_members(interp: Interpreter, cls: PyClass, decorator: ast.expr) -> bool:
    """A class decorator known to add no attribute a question reads."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    try:
        value = interp.eval(target, cls.scope)
    except (Unknown, RecursionError):
        return False
    return isinstance(value, External) and value.qualname in CLASS_DECORATORS
