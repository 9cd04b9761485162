"""The fields of the tree's named tuples and dataclasses (``DeviceCapability``,
``AttentionSelectorConfig``, ``MultipleOf``): what a call of the class binds."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval.members import class_mro
from sphinxext_attn.pyeval.scope import MISSING
from sphinxext_attn.pyeval.values import Instance, PyClass, Unknown, Value

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter

#: (name, default expression or None), in the order a call binds them
Fields = list[tuple[str, ast.expr | None]]


def record_fields(interp: Interpreter, cls: PyClass) -> Fields | None:
    """Fields of a named tuple or dataclass (annotated class-level names), else None.
    Read once per class (its statements and bases do not change), kept by the
    interpreter the class is of."""
    known = interp.record_fields_found
    if cls in known:
        return known[cls]
    known[cls] = None
    if not (interp.is_namedtuple(cls) or is_dataclass(cls)):
        return None
    fields: dict[str, ast.expr | None] = {}
    for klass in reversed(class_mro(cls, interp)):
        if not isinstance(klass, PyClass):
            continue
        for stmt in klass.node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                if "ClassVar" in ast.dump(stmt.annotation):
                    continue
                fields[stmt.target.id] = stmt.value
    found = known[cls] = list(fields.items())
    return found


def _dataclass_decorator(cls: PyClass) -> ast.expr | None:
    for decorator in cls.node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "dataclass":
            return decorator
    return None


def is_dataclass(cls: PyClass) -> bool:
    return _dataclass_decorator(cls) is not None


def _keyword_true(cls: PyClass, keyword: str) -> bool:
    decorator = _dataclass_decorator(cls)
    return isinstance(decorator, ast.Call) and any(
        kw.arg == keyword and isinstance(kw.value, ast.Constant) and kw.value.value is True
        for kw in decorator.keywords
    )


def frozen_field(interp: Interpreter, inst: Instance, name: str) -> bool:
    """Whether ``inst.name = v`` raises FrozenInstanceError: the first ``__setattr__``
    along the MRO is a ``frozen=True`` dataclass's, which refuses its own instances
    any name and a subclass's instances the dataclass's fields. One the tree
    writes is not evaluated."""
    for klass in class_mro(inst.cls, interp):
        if not isinstance(klass, PyClass):
            continue
        if _keyword_true(klass, "frozen"):
            return inst.cls is klass or name in dict(record_fields(interp, klass) or [])
        if interp.class_own_attr(klass, "__setattr__") is not MISSING:
            raise Unknown(f"{klass.name}.__setattr__ not evaluated", klass.path, klass.node.lineno)
    return False


def dataclass_eq(cls: PyClass) -> bool:
    """A dataclass compares by its fields unless declared ``eq=False``."""
    decorator = _dataclass_decorator(cls)
    if not isinstance(decorator, ast.Call):
        return decorator is not None
    return not any(
        kw.arg == "eq" and isinstance(kw.value, ast.Constant) and kw.value.value is False
        for kw in decorator.keywords
    )


def check_record_eq(
    interp: Interpreter, left: Value, right: Value, where: tuple[str, int]
) -> None:
    """A dataclass's ``==`` compares its declared fields only: an instance holding
    other names (set by ``__post_init__`` or its own ``__init__``) is unknown."""
    for obj in (left, right):
        if isinstance(obj, Instance) and obj.items is None and dataclass_eq(obj.cls):
            declared = [name for name, _ in record_fields(interp, obj.cls) or []]
            if list(obj.fields) != declared:
                raise Unknown(f"== of {obj.cls.name} instances holding more than fields", *where)
