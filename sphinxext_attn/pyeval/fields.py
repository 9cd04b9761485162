"""The fields of the tree's named tuples and dataclasses (``DeviceCapability``,
``AttentionSelectorConfig``, ``MultipleOf``): what a call of the class binds."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval.members import class_mro
from sphinxext_attn.pyeval.values import PyClass

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


def dataclass_eq(cls: PyClass) -> bool:
    """A dataclass compares by its fields unless declared ``eq=False``."""
    decorator = _dataclass_decorator(cls)
    if not isinstance(decorator, ast.Call):
        return decorator is not None
    return not any(
        kw.arg == "eq" and isinstance(kw.value, ast.Constant) and kw.value.value is False
        for kw in decorator.keywords
    )
