"""Creating instances: an enum's member by value, a named tuple or dataclass from its
fields (and ``__post_init__``), a plain class of the tree through its ``__init__``.
A class deriving from something outside the tree (``torch.nn.Module``) is unknown.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval import ops
from sphinxext_attn.pyeval.fields import (
    Field,
    Fields,
    decorator_flag,
    is_dataclass,
    record_fields,
    record_instance,
)
from sphinxext_attn.pyeval.members import class_mro, outside_base
from sphinxext_attn.pyeval.scope import MISSING, cached, remember
from sphinxext_attn.pyeval.values import (
    EnumMember,
    External,
    Instance,
    PyClass,
    PyFunction,
    Raised,
    Unknown,
    Value,
    line_of,
)

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter


def instantiate(
    interp: Interpreter,
    cls: PyClass,
    args: list[Value],
    kwargs: dict[str, Value],
    node: ast.AST,
    path: str,
) -> Value:
    if interp.is_enum(cls):
        where = (path, line_of(node))
        if kwargs or len(args) != 1:  # the functional API (``E("F", "A B")``) or no value
            if not args and not kwargs:
                raise Raised("TypeError", "EnumType.__call__() missing argument 'value'")
            raise Unknown(f"{cls.name}() with other than one value not evaluated", *where)
        if isinstance(args[0], EnumMember) and args[0].cls is cls:
            return args[0]  # ``E(E.A)`` is ``E.A``
        for member in interp.iterate(cls, node, path):
            if ops.equal(member.value, args[0], interp.budget, where):
                return member
        value = ops.text(args[0], interp.budget, where)
        raise Raised("ValueError", f"{value} is not a valid {cls.name}")
    owner = cls if interp.is_namedtuple(cls) else _generated_init(interp, cls)
    fields = record_fields(interp, owner) if owner is not None else None
    if fields is None or owner is None:
        if any(
            isinstance(c, External)
            and c.qualname.startswith("builtins.")
            and c.qualname.endswith(("Error", "Exception"))
            for c in class_mro(cls, interp)
        ):
            return _exception(interp, cls, node, path)
        return _construct(interp, cls, args, kwargs, node, path)
    where = (path, line_of(node))
    named_tuple = interp.is_namedtuple(cls)
    if not (named_tuple or decorator_flag(owner, "init", True)):
        raise Unknown(f"{owner.name}(init=False) not evaluated", *where)
    values = _bind(cls, fields, args, kwargs)
    for f in fields:
        if f.name in values:
            continue
        if f.default is not None:
            values[f.name] = _default(interp, f, not named_tuple, where)
        elif f.factory is not None:
            factory = interp.eval(f.factory, interp.class_body_scope(f.owner))
            values[f.name] = interp.call(factory, [], {}, node, path)  # new for each
    ordered = {f.name: values[f.name] for f in fields if f.name in values}
    if named_tuple:
        return Instance(cls, ordered, tuple(ordered.values()))
    made = record_instance(interp, cls, ordered)
    if interp.defines(cls, "__post_init__"):
        # a dataclass's __init__ ends by calling it
        interp.call(interp.getattr(made, "__post_init__", node, path), [], {}, node, path)
    return made


def _bind(
    cls: PyClass, fields: Fields, args: list[Value], kwargs: dict[str, Value]
) -> dict[str, Value]:
    """The generated ``__init__``'s parameters: the fields it takes that are not
    keyword-only, in order, then the keyword-only ones (by keyword alone)."""
    positional = [f for f in fields if f.init and not f.kw_only]
    if len(args) > len(positional):
        raise Raised("TypeError", f"{cls.name}() takes {len(positional)} positional arguments")
    values = {f.name: value for f, value in zip(positional, args, strict=False)}
    taken = {f.name for f in fields if f.init}
    for name, value in kwargs.items():
        if name not in taken:
            raise Raised("TypeError", f"{cls.name}() got an unexpected keyword argument {name!r}")
        if name in values:
            raise Raised("TypeError", f"{cls.name}() got multiple values for argument {name!r}")
        values[name] = value
    for f in fields:
        if f.init and f.required and f.name not in values:
            raise Raised("TypeError", f"{cls.name}() missing argument {f.name!r}")
    return values


def _default(interp: Interpreter, f: Field, dataclass: bool, where: tuple[str, int]) -> Value:
    """A field's default (``default=`` or the value assigned), evaluated once as
    when CPython makes the class. CPython refuses an unhashable one then (``use
    default_factory``): unknown."""
    expr = f.default
    assert expr is not None
    store = interp.record_defaults.setdefault(f.owner, {})
    value = cached(store, f.name, interp)  # made once: every instance shares it
    if value is MISSING:
        scope = interp.class_body_scope(f.owner)
        value = remember(store, f.name, interp, lambda: interp.eval(expr, scope))
    if dataclass and _unhashable(interp, value):
        raise Unknown(f"{f.owner.name}.{f.name}: a mutable default (ValueError)", *where)
    return value


def _unhashable(interp: Interpreter, value: Value) -> bool:
    """Whether ``value``'s class has ``__hash__ = None``: a list, dict or set, an
    instance of a dataclass comparing by fields that is neither frozen nor
    ``unsafe_hash``, of a class defining ``__eq__`` but not ``__hash__``."""
    if isinstance(value, list | dict | set):
        return True
    if not isinstance(value, Instance) or value.items is not None:
        return False
    own, _ = interp.class_attr(value.cls, "__hash__")
    if own is not MISSING:
        return own is None
    if value.by_fields:
        return not any(
            isinstance(k, PyClass)
            and is_dataclass(k)
            and (decorator_flag(k, "frozen", False) or decorator_flag(k, "unsafe_hash", False))
            for k in class_mro(value.cls, interp)
        )
    return interp.defines(value.cls, "__eq__") is not None


def _generated_init(interp: Interpreter, cls: PyClass) -> PyClass | None:
    """The dataclass whose generated ``__init__`` a call of ``cls`` runs (``cls`` or a
    base), or None: a class along the MRO writes its own ``__init__`` first."""
    for klass in class_mro(cls, interp):
        if isinstance(klass, PyClass):
            if interp.class_own_attr(klass, "__init__") is not MISSING:
                return None
            if is_dataclass(klass):
                return klass
    return None


def _exception(interp: Interpreter, cls: PyClass, node: ast.AST, path: str) -> Value:
    """An instance of a tree class deriving from a builtin exception: its class's
    attributes are read as an instance's; what the exception itself holds (``args``)
    is unknown (see objects._instance_getattr), and so is an ``__init__`` of the tree."""
    if interp.defines(cls, "__init__", "__new__") is not None:
        line = line_of(node)
        raise Unknown(f"creating a {cls.name} exception with its own __init__", path, line)
    return Instance(cls)


def _construct(
    interp: Interpreter,
    cls: PyClass,
    args: list[Value],
    kwargs: dict[str, Value],
    node: ast.AST,
    path: str,
) -> Value:
    """A plain class of the tree: an instance, then its ``__init__`` if it has one.
    Classes deriving from something outside the tree (``torch.nn.Module``) are unknown."""
    line = line_of(node)
    if outside_base(interp, cls):
        raise Unknown(f"creating a {cls.name} instance not evaluated", path, line)
    inst = record_instance(interp, cls)  # a dataclass keeping its __init__ compares fields
    init, _ = interp.class_attr(cls, "__init__")
    if isinstance(init, PyFunction):
        interp.invoke(init, [inst, *args], kwargs, node)
    elif args or kwargs:
        raise Raised("TypeError", f"{cls.name}() takes no arguments")
    return inst
