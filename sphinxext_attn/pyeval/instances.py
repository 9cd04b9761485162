"""Creating instances: an enum's member by value, a named tuple or dataclass from its
fields (and ``__post_init__``), a plain class of the tree through its ``__init__``.
A class deriving from something outside the tree (``torch.nn.Module``) is unknown.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval import ops
from sphinxext_attn.pyeval.fields import dataclass_eq, is_dataclass, record_fields
from sphinxext_attn.pyeval.members import class_mro
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
        if args and isinstance(args[0], EnumMember) and args[0].cls is cls:
            return args[0]  # ``E(E.A)`` is ``E.A``
        for member in interp.iterate(cls, node, path):
            if args and ops.equal(member.value, args[0], interp.budget, where):
                return member
        value = ops.text(args[0] if args else None, interp.budget, where)
        raise Raised("ValueError", f"{value} is not a valid {cls.name}")
    fields = record_fields(interp, cls)
    if (
        fields is not None
        and is_dataclass(cls)
        and interp.class_own_attr(cls, "__init__") is not MISSING
    ):
        fields = None  # a dataclass keeps the ``__init__`` its body writes
    if fields is None:
        if any(
            isinstance(c, External)
            and c.qualname.startswith("builtins.")
            and c.qualname.endswith(("Error", "Exception"))
            for c in class_mro(cls, interp)
        ):
            return External(f"builtins.{cls.name}")
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
            values[name] = interp.eval(default, interp.class_body_scope(cls))
    ordered = {name: values[name] for name, _ in fields}
    items = tuple(ordered.values()) if interp.is_namedtuple(cls) else None
    made = Instance(cls, ordered, items, by_fields=items is None and dataclass_eq(cls))
    if items is None and interp.defines(cls, "__post_init__"):
        # a dataclass's __init__ ends by calling it
        interp.call(interp.getattr(made, "__post_init__", node, path), [], {}, node, path)
    return made


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
    plain = {"abc.ABC", "typing.Generic", "builtins.object", "typing.Protocol"}
    for klass in class_mro(cls, interp)[1:]:
        if isinstance(klass, External) and klass.qualname not in plain:
            raise Unknown(f"creating a {cls.name} instance not evaluated", path, line)
    inst = Instance(cls)
    init, _ = interp.class_attr(cls, "__init__")
    if isinstance(init, PyFunction):
        interp.invoke(init, [inst, *args], kwargs, node)
    elif args or kwargs:
        raise Raised("TypeError", f"{cls.name}() takes no arguments")
    return inst
