"""Raising and catching: what ``raise X(...)`` raises and which ``except`` takes it.

Builtin exceptions are known by name with this Python's own hierarchy
(:data:`.values.EXCEPTION_MRO`); a tree class carries the names of its bases.
Raising something that is not an exception is Python's TypeError.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sphinxext_attn.pyeval.members import class_mro
from sphinxext_attn.pyeval.values import (
    EXCEPTION_MRO,
    External,
    PyClass,
    Raised,
    Unknown,
    Value,
)

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter


def raised(interp: Interpreter, value: Value, message: str, where: tuple[str, int]) -> Raised:
    """The exception ``raise value(message)`` raises, with its bases' names."""
    kind = exception_name(value)
    if kind is None:
        raise Unknown("raise of an unknown exception", *where)
    if not _derives_from_base_exception(interp, value, where):
        return Raised("TypeError", "exceptions must derive from BaseException")
    bases: list[str] = []
    if isinstance(value, PyClass):
        for klass in class_mro(value, interp)[1:]:
            name = exception_name(klass)
            if name is not None:
                bases.append(name)
    return Raised(kind, message, tuple(bases))


def _derives_from_base_exception(
    interp: Interpreter, value: Value, where: tuple[str, int]
) -> bool:
    """``raise NotImplemented`` or a plain class raises TypeError instead."""
    if isinstance(value, PyClass):
        mro = class_mro(value, interp)[1:]
        names = [c.qualname for c in mro if isinstance(c, External)]
        if any(n.removeprefix("builtins.") in EXCEPTION_MRO for n in names):
            return True
        if any(n != "builtins.object" for n in names):
            raise Unknown(f"{value.name} has a base outside the tree", *where)
        return False
    # else a builtin name (``raised`` took only values with an exception name)
    return (exception_name(value) or "") in EXCEPTION_MRO


def exception_name(value: Value) -> str | None:
    if isinstance(value, External) and value.qualname.startswith("builtins."):
        return value.qualname.removeprefix("builtins.")
    if isinstance(value, PyClass):
        return value.name
    return None
