"""Creating instances: an enum's member by value, a named tuple or dataclass from its
fields (and ``__post_init__``), a plain class of the tree through its ``__init__``.
A class deriving from something outside the tree (``torch.nn.Module``) is unknown.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval import ops
from sphinxext_attn.pyeval.fields import dataclass_eq, is_dataclass, record_fields
from sphinxext_attn.pyeval.members import class_mro, outside_base
from sphinxext_attn.pyeval.scope import MISSING
from sphinxext_attn.pyeval.values import (
    EnumMember,
    External,
    Instance,
    PyClass,
    PyFunction,
    Raised,
    Unknown,
    Value,
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
        where = (path, getattr(node, "lineno", 0))
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
    if len(args) > len(fields):
        raise Raised("TypeError", f"{cls.name}() takes {len(fields)} positional arguments")
    values: dict[str, Value] = {}
    for (name, _default), value in zip(fields, args, strict=False):
        values[name] = value
    for name, value in kwargs.items():
        if name not in dict(fields):
            raise Raised("TypeError", f"{cls.name}() got an unexpected keyword argument {name!r}")
        values[name] = value
    for name, default in fields:
        if name not in values:
            if default is None:
                raise Raised("TypeError", f"{cls.name}() missing argument {name!r}")
            values[name] = interp.eval(default, interp.class_body_scope(owner))
    ordered = {name: values[name] for name, _ in fields}
    items = tuple(ordered.values()) if interp.is_namedtuple(cls) else None
    made = Instance(cls, ordered, items, by_fields=items is None and dataclass_eq(owner))
    if items is None and interp.defines(cls, "__post_init__"):
        # a dataclass's __init__ ends by calling it
        interp.call(interp.getattr(made, "__post_init__", node, path), [], {}, node, path)
    return made


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
        line = getattr(node, "lineno", 0)
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
    line = getattr(node, "lineno", 0)
    if outside_base(interp, cls):
        raise Unknown(f"creating a {cls.name} instance not evaluated", path, line)
    inst = Instance(cls, by_fields=dataclass_eq(cls))  # a dataclass keeping its __init__
    init, _ = interp.class_attr(cls, "__init__")
    if isinstance(init, PyFunction):
        interp.invoke(init, [inst, *args], kwargs, node)
    elif args or kwargs:
        raise Raised("TypeError", f"{cls.name}() takes no arguments")
    return inst
