"""Attributes, the method resolution order, comparisons and iteration of evaluated values."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from sphinxext_attn.core.pyeval import ops
from sphinxext_attn.core.pyeval.attrsets import set_after_class, value_set
from sphinxext_attn.core.pyeval.lazyclass import LazyBody, statements_for
from sphinxext_attn.core.pyeval.scope import (
    MISSING,
    ModuleScope,
    cached,
    index_bindings,
    live_binding,
    remember,
)
from sphinxext_attn.core.pyeval.values import (
    Bound,
    Builtin,
    ConfigDefaults,
    EnumMember,
    External,
    Instance,
    PyClass,
    PyFunction,
    Raised,
    SuperProxy,
    Unknown,
)

if TYPE_CHECKING:
    from sphinxext_attn.core.pyeval.interp import Interpreter

ENUM_BASES = frozenset({"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag"})
NAMEDTUPLE_BASES = frozenset({"typing.NamedTuple", "typing_extensions.NamedTuple"})
#: Builtin types the evaluator knows by name (for ``isinstance`` and conversions).
PLAIN_TYPES: dict[str, Any] = {
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


def _bases(interp: Interpreter, cls: PyClass) -> list[Any]:
    if cls.bases_cache is None:
        bases: list[Any] = []
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


def class_mro(cls: PyClass, interp: Interpreter | None = None) -> list[Any]:
    """C3 linearisation over tree classes; bases from outside the tree are kept
    as :class:`External` entries (``enum.Enum``, ``builtins.str``)."""
    if cls.mro_cache is not None:
        return cls.mro_cache
    if interp is None:
        return [cls]
    cls.mro_cache = [cls]  # a cycle in the bases ends here
    seqs = [class_mro(b, interp) if isinstance(b, PyClass) else [b] for b in _bases(interp, cls)]
    seqs.append(list(_bases(interp, cls)))
    result: list[Any] = [cls]
    while any(seqs):
        for seq in seqs:
            if not seq:
                continue
            head = seq[0]
            if not any(head in s[1:] for s in seqs if s):
                break
        else:
            head = next(s[0] for s in seqs if s)  # inconsistent: take the first
        result.append(head)
        seqs = [s[1:] if s and s[0] == head else s for s in seqs]
    cls.mro_cache = result
    return result


class ObjectMixin:
    """Attribute access and the protocols of values, for :class:`Interpreter`."""

    #: writes of class attributes so far (part of every statement memo key)
    class_writes = 0

    def is_enum(self: Interpreter, cls: PyClass) -> bool:
        return any(
            isinstance(c, External) and c.qualname in ENUM_BASES for c in class_mro(cls, self)
        )

    def is_namedtuple(self: Interpreter, cls: PyClass) -> bool:
        return any(
            isinstance(c, External) and c.qualname in NAMEDTUPLE_BASES
            for c in class_mro(cls, self)
        )

    def class_own_attr(self: Interpreter, cls: PyClass, name: str) -> Any:
        """An attribute defined in ``cls``'s own body (or set on it), evaluated once."""
        found = cached(cls.attrs, name, self)
        if found is not MISSING:
            return found
        settings = set_after_class(self, cls, name)
        if settings:  # set by module-level code after the class statement: it wins
            return remember(cls.attrs, name, self, lambda: value_set(self, cls, settings))
        index = self._class_index.get(id(cls.node))
        if isinstance(cls.node.body, LazyBody) and not cls.node.body.loaded:
            walrus = ":=" in cls.node.body.chunk.text
            index = index_bindings(statements_for(cls.node, name), True, walrus)
        elif index is None:
            walrus = cls.module.has_walrus
            index = self._class_index[id(cls.node)] = index_bindings(cls.node.body, True, walrus)
        bindings = index.get(name)
        if not bindings:
            return MISSING
        scope = self.class_body_scope(cls)
        if bindings[-1].guards:  # bound inside ``if``/``try``: the block that runs
            return remember(cls.attrs, name, self, lambda: self._live(cls, bindings, name, scope))
        stmt = bindings[-1].stmt
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            return remember(cls.attrs, name, self, self.make_function(stmt, scope, owner=cls))
        return remember(cls.attrs, name, self, lambda: self._class_value(cls, stmt, name, scope))

    def _live(self: Interpreter, cls: PyClass, bindings: Any, name: str, scope: Any) -> Any:
        """The member the class body's blocks bind (MISSING: none runs; a base has it)."""
        binding = live_binding(bindings, self, scope, cls.path)
        stmt = binding.stmt if binding is not None else None
        if stmt is None:
            return MISSING
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            return self.make_function(stmt, scope, owner=cls)
        return self._class_value(cls, stmt, name, scope)

    def _class_value(self: Interpreter, cls: PyClass, stmt: Any, name: str, scope: Any) -> Any:
        value = self.bind_statement(stmt, name, scope)
        if self.is_enum(cls) and not name.startswith("_"):
            value = EnumMember(cls, name, value, ops.plain_enum_class(class_mro(cls, self)))
        return value

    def class_attr(
        self: Interpreter, cls: PyClass, name: str, after: PyClass | None = None
    ) -> tuple[Any, Any]:
        """(value, defining class) along the MRO, starting after ``after`` if given."""
        mro = class_mro(cls, self)
        if after is not None:
            mro = mro[mro.index(after) + 1 :] if after in mro else []
        for klass in mro:
            if isinstance(klass, PyClass):
                value = self.class_own_attr(klass, name)
                if value is not MISSING:
                    return value, klass
            elif isinstance(klass, External) and klass.qualname == "<unknown base>":
                raise Unknown(
                    f"{cls.name} has a base class that could not be resolved",
                    cls.path,
                    cls.node.lineno,
                )
        return MISSING, None

    def getattr(self: Interpreter, obj: Any, name: str, node: ast.AST, path: str) -> Any:
        if isinstance(obj, ModuleScope):
            return self.module_attr(obj, name, node)
        if isinstance(obj, PyClass):
            return self._class_getattr(obj, name, node)
        if isinstance(obj, Instance):
            return self._instance_getattr(obj, name, node)
        if isinstance(obj, EnumMember):
            if name == "value":
                return obj.value
            if name == "name":
                return obj.name
            value, _ = self.class_attr(obj.cls, name)
            if value is MISSING:
                raise Raised("AttributeError", name)
            return self._bind(value, obj, obj.cls)
        if isinstance(obj, SuperProxy):
            target_cls = (
                obj.target if isinstance(obj.target, PyClass) else getattr(obj.target, "cls", None)
            )
            if not isinstance(target_cls, PyClass):
                raise Unknown("super() on an unknown object", path, getattr(node, "lineno", 0))
            value, _ = self.class_attr(target_cls, name, after=obj.start)
            if value is MISSING:
                raise Unknown(
                    f"super().{name} is outside the tree", path, getattr(node, "lineno", 0)
                )
            return self._bind(value, obj.target, target_cls)
        if isinstance(obj, External):
            return self.machine.external_attr(self, obj, name)
        if isinstance(obj, ConfigDefaults):
            return self.machine.config_attr(self, obj, name, path)
        if isinstance(obj, PyFunction) and name == "__name__":
            return obj.name
        method = self.primitive_method(obj, name, node, path)
        if method is not MISSING:
            return method
        if obj is None:
            raise Raised("AttributeError", f"'NoneType' object has no attribute {name!r}")
        raise Unknown(
            f"attribute {name} of {type(obj).__name__} not evaluated",
            path,
            getattr(node, "lineno", 0),
        )

    def _class_getattr(self: Interpreter, cls: PyClass, name: str, node: ast.AST) -> Any:
        value, _ = self.class_attr(cls, name)
        if value is MISSING:
            if name in ("__name__", "__qualname__"):
                return cls.name
            if name == "__module__":
                return cls.module.dotted
            raise Raised("AttributeError", f"type object {cls.name!r} has no attribute {name!r}")
        return self._bind(value, cls, cls)

    def _instance_getattr(self: Interpreter, inst: Instance, name: str, node: ast.AST) -> Any:
        if name in inst.fields:
            return inst.fields[name]
        if name == "_asdict" and inst.items is not None:
            return Builtin("_asdict", lambda *_: dict(inst.fields))
        value, _ = self.class_attr(inst.cls, name)
        if value is MISSING:
            raise Raised("AttributeError", f"{inst.cls.name!r} object has no attribute {name!r}")
        if isinstance(value, PyFunction) and value.kind == "property":
            return self.invoke(value, [inst], {}, node)
        return self._bind(value, inst, inst.cls)

    def _bind(self: Interpreter, value: Any, target: Any, cls: PyClass) -> Any:
        if isinstance(value, PyFunction):
            if value.kind == "classmethod":
                return Bound(value, cls)
            if value.kind == "function" and not isinstance(target, PyClass):
                return Bound(value, target)
            if value.kind == "property" and not isinstance(target, PyClass):
                return self.invoke(value, [target], {}, value.node)
        return value

    def setattr(
        self: Interpreter, obj: Any, name: str, value: Any, node: ast.AST, path: str
    ) -> None:
        if isinstance(obj, PyClass):
            obj.attrs[name] = value
            if obj.mro_cache is not None:
                # remembered answers may have read the old value; a class never
                # looked up along its MRO (one just built) was read by none
                self.class_writes += 1
        elif isinstance(obj, Instance):
            obj.fields[name] = value
        else:
            raise Unknown(f"setting {name} not evaluated", path, getattr(node, "lineno", 0))

    def set_item(
        self: Interpreter, container: Any, key: Any, value: Any, node: ast.AST, path: str
    ) -> None:
        """``container[key] = value`` for a dict or a list (a slice sized first)."""
        if isinstance(container, dict):
            container[self.hashable(key, node, path)] = value
            return
        if not isinstance(container, list):
            raise Unknown("item assignment not evaluated", path, getattr(node, "lineno", 0))
        if isinstance(key, slice):
            value = self.iterate(value, node, path)
            if len(container) + len(value) > ops.MAX_ITEMS:
                raise Unknown("sequence too long to evaluate", path, getattr(node, "lineno", 0))
        try:
            container[key] = value
        except (TypeError, IndexError, ValueError) as exc:
            raise Raised(type(exc).__name__, str(exc)) from None

    def object_truth(self: Interpreter, value: Any, node: ast.AST, path: str) -> bool:
        if isinstance(value, Instance):
            if value.items is not None:
                return bool(value.items)
            for dunder in ("__bool__", "__len__"):
                method, _ = self.class_attr(value.cls, dunder)
                if method is not MISSING:
                    return bool(
                        self.call(self._bind(method, value, value.cls), [], {}, node, path)
                    )
            return True
        if isinstance(value, EnumMember | Bound | Builtin | SuperProxy | ConfigDefaults):
            return True
        if isinstance(value, External):
            return self.machine.external_truth(value, node, path)
        raise Unknown(
            f"truth of {type(value).__name__} not evaluated", path, getattr(node, "lineno", 0)
        )

    def compare(
        self: Interpreter, op: ast.cmpop, left: Any, right: Any, node: ast.AST, path: str
    ) -> bool:
        where = (path, getattr(node, "lineno", 0))
        if isinstance(op, ast.Is):
            return _same(left, right)
        if isinstance(op, ast.IsNot):
            return not _same(left, right)
        if isinstance(op, ast.In):
            return ops.contains(right, left, where, self.budget)
        if isinstance(op, ast.NotIn):
            return not ops.contains(right, left, where, self.budget)
        dunder = {
            ast.Eq: "__eq__",
            ast.NotEq: "__ne__",
            ast.Lt: "__lt__",
            ast.LtE: "__le__",
            ast.Gt: "__gt__",
            ast.GtE: "__ge__",
        }[type(op)]
        for obj, other, name in ((left, right, dunder), (right, left, _REFLECT[dunder])):
            if isinstance(obj, Instance):
                method, _ = self.class_attr(obj.cls, name)
                if method is not MISSING:
                    result = self.call(self._bind(method, obj, obj.cls), [other], {}, node, path)
                    if not (
                        isinstance(result, External)
                        and result.qualname == "builtins.NotImplemented"
                    ):
                        return self.truth(result, node, path)
        if isinstance(op, ast.Eq):
            return ops.equal(left, right, self.budget, where)
        if isinstance(op, ast.NotEq):
            return not ops.equal(left, right, self.budget, where)
        return ops.order(op, left, right, where, self.budget)

    def subscript(self: Interpreter, value: Any, index: Any, node: ast.AST, path: str) -> Any:
        if isinstance(value, External):
            return self.machine.external_subscript(value, index)
        if isinstance(value, Instance) and value.items is not None:
            value = value.items
        if isinstance(value, PyClass) and self.is_enum(value) and isinstance(index, str):
            member = self.class_own_attr(value, index)
            if isinstance(member, EnumMember):
                return member
            raise Raised("KeyError", index)
        if isinstance(value, list | tuple | str | dict | range):
            where = (path, getattr(node, "lineno", 0))
            try:
                if isinstance(value, dict):
                    self.budget.spend(1 + len(value), where)  # the key compared with each
                    for key, item in value.items():
                        if ops.equal(key, index, self.budget, where):
                            return item
                    raise Raised("KeyError", ops.text(index, self.budget, where))
                got = value[index]
                return ops.paid(got, self.budget, where) if isinstance(index, slice) else got
            except (IndexError, TypeError, ValueError) as exc:
                raise Raised(type(exc).__name__, str(exc)) from None
        raise Unknown(
            f"subscript of {type(value).__name__} not evaluated", path, getattr(node, "lineno", 0)
        )

    def iterate(self: Interpreter, value: Any, node: ast.AST, path: str) -> list[Any]:
        if isinstance(value, Instance) and value.items is not None:
            return list(value.items)
        if isinstance(value, list | tuple | str | range | set | frozenset | dict):
            if len(value) > ops.MAX_ITEMS:
                raise Unknown("sequence too long to evaluate", path, getattr(node, "lineno", 0))
            ops.charge(self.budget, 8 * len(value), (path, getattr(node, "lineno", 0)))
            return list(value)
        if isinstance(value, PyClass) and self.is_enum(value):
            members = [self.class_own_attr(value, n) for n in _member_names(value)]
            return [m for m in members if isinstance(m, EnumMember)]
        raise Unknown(
            f"iteration over {type(value).__name__} not evaluated",
            path,
            getattr(node, "lineno", 0),
        )

    def make_set(self: Interpreter, items: list[Any], node: ast.AST, path: str) -> Any:
        where = (path, getattr(node, "lineno", 0))
        ops.weigh(items, self.budget, where)
        ops.charge(self.budget, 32 * len(items), where)
        try:
            return set(items)
        except TypeError:
            raise Unknown("set of unhashable values", *where) from None

    def hashable(self: Interpreter, value: Any, node: ast.AST, path: str) -> Any:
        """``value`` as a dict key: its hash (a native walk) charged first."""
        ops.weigh(value, self.budget, (path, getattr(node, "lineno", 0)))
        try:
            hash(value)
        except TypeError:
            raise Raised("TypeError", "unhashable type") from None
        return value


def _member_names(cls: PyClass) -> list[str]:
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
    return [n for n in names if not n.startswith("_")]


_REFLECT = {
    "__eq__": "__eq__",
    "__ne__": "__ne__",
    "__lt__": "__gt__",
    "__le__": "__ge__",
    "__gt__": "__lt__",
    "__ge__": "__le__",
}


def _same(left: Any, right: Any) -> bool:
    if left is right:
        return True
    if isinstance(left, EnumMember) and isinstance(right, EnumMember):
        return left.cls is right.cls and left.name == right.name
    if isinstance(left, External) and isinstance(right, External):
        return left.qualname == right.qualname
    if isinstance(left, bool | type(None)) or isinstance(right, bool | type(None)):
        return left is right
    return False
