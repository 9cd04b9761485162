"""Operators of the evaluated subset, with size limits.

Every result that could grow without bound (``10**10**10``, ``"x" * 10**9``,
``1 << 10**9``) is checked before it is computed; what would be too large is
:class:`Unknown`, so memory stays bounded whatever the analysed code says.
"""

from __future__ import annotations

import ast
import operator
from typing import Any

from sphinxext_attn.core.pyeval.values import EnumMember, External, Instance, Raised, Unknown

#: Largest integer the evaluator builds, in bits.
MAX_INT_BITS = 4096
#: Longest string, list or tuple the evaluator builds.
MAX_ITEMS = 100_000

BINOPS: dict[type[ast.operator], Any] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitAnd: operator.and_,
    ast.BitXor: operator.xor,
}


def _size(value: Any) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value.bit_length()
    return 0


def _length(value: Any) -> int:
    return len(value) if isinstance(value, str | list | tuple | bytes) else 0


def check_size(value: Any, where: tuple[str, int]) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and _size(value) > MAX_INT_BITS:
        raise Unknown("integer too large to evaluate", *where)
    if _length(value) > MAX_ITEMS:
        raise Unknown("sequence too long to evaluate", *where)
    return value


def binop(op: ast.operator, left: Any, right: Any, where: tuple[str, int]) -> Any:
    fn = BINOPS.get(type(op))
    if fn is None:
        raise Unknown(f"operator {type(op).__name__} not evaluated", *where)
    if isinstance(op, ast.BitOr) and not (isinstance(left, int) and isinstance(right, int)):
        if isinstance(left, set | frozenset | dict) and isinstance(right, type(left)):
            return fn(left, right)
        raise Unknown("| on these values is not evaluated (a type union?)", *where)
    for value in (left, right):
        if not isinstance(value, int | float | str | list | tuple | set | frozenset | dict):
            raise Unknown(f"arithmetic on {type(value).__name__} not evaluated", *where)
    if isinstance(op, ast.Pow) and isinstance(left, int) and isinstance(right, int):
        if right < 0:
            return check_size(float(left) ** right, where) if left else _zero_div()
        bits = max(1, abs(left).bit_length()) * right
        if abs(left) > 1 and bits > MAX_INT_BITS:
            raise Unknown("integer too large to evaluate", *where)
    if isinstance(op, ast.LShift) and isinstance(right, int) and right > MAX_INT_BITS:
        raise Unknown("integer too large to evaluate", *where)
    if isinstance(op, ast.Mult):
        for seq, count in ((left, right), (right, left)):
            if _length(seq) and isinstance(count, int) and _length(seq) * count > MAX_ITEMS:
                raise Unknown("sequence too long to evaluate", *where)
    if isinstance(op, ast.Add) and _length(left) + _length(right) > MAX_ITEMS:
        raise Unknown("sequence too long to evaluate", *where)
    try:
        return check_size(fn(left, right), where)
    except ZeroDivisionError:
        _zero_div()
    except (TypeError, ValueError, OverflowError) as exc:
        raise Raised("TypeError", str(exc)) from None


def _zero_div() -> Any:
    raise Raised("ZeroDivisionError", "division by zero")


def enum_is_plain(member: EnumMember) -> bool:
    """A ``str``/``int`` enum compares equal to its value (``AttentionType``)."""
    from sphinxext_attn.core.pyeval.objects import class_mro  # objects imports ops

    return any(
        isinstance(c, External)
        and c.qualname in ("builtins.str", "builtins.int", "enum.StrEnum", "enum.IntEnum")
        for c in class_mro(member.cls)
    )


def plain_value(value: Any) -> Any:
    """The value a plain comparison sees (``str``-enum members compare as strings)."""
    if isinstance(value, EnumMember) and enum_is_plain(value):
        return value.value
    if isinstance(value, Instance) and value.items is not None:
        return tuple(plain_value(v) for v in value.items)
    return value


def equal(left: Any, right: Any) -> bool:
    if left is right:
        return True
    if isinstance(left, EnumMember) or isinstance(right, EnumMember):
        if isinstance(left, EnumMember) and isinstance(right, EnumMember):
            return left.cls is right.cls and left.name == right.name
        a, b = plain_value(left), plain_value(right)
        return not isinstance(a, EnumMember) and not isinstance(b, EnumMember) and a == b
    if isinstance(left, list | tuple) and isinstance(right, list | tuple):
        return (
            type(left) is type(right)
            and len(left) == len(right)
            and all(equal(a, b) for a, b in zip(left, right, strict=True))
        )
    if isinstance(left, Instance) or isinstance(right, Instance):
        a, b = plain_value(left), plain_value(right)
        if isinstance(a, Instance) or isinstance(b, Instance):
            return False
        return bool(a == b)
    try:
        return bool(left == right)
    except Exception:  # noqa: BLE001 - values are plain data here
        return False


def contains(container: Any, item: Any, where: tuple[str, int]) -> bool:
    if isinstance(container, str):
        if not isinstance(item, str):
            raise Raised("TypeError", "'in <string>' requires string")
        return item in container
    if isinstance(container, dict):
        return any(equal(item, k) for k in container)
    if isinstance(container, list | tuple | set | frozenset):
        return any(equal(item, x) for x in container)
    if isinstance(container, range):
        return item in container
    raise Unknown(f"membership in {type(container).__name__} not evaluated", *where)


ORDER = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}


def order(op: ast.cmpop, left: Any, right: Any, where: tuple[str, int]) -> bool:
    a, b = plain_value(left), plain_value(right)
    ok = (int, float, str, tuple, list)
    if not (isinstance(a, ok) and isinstance(b, ok)):
        raise Unknown(
            f"ordering of {type(a).__name__} and {type(b).__name__} not evaluated", *where
        )
    try:
        return bool(ORDER[type(op)](a, b))
    except TypeError as exc:
        raise Raised("TypeError", str(exc)) from None


def unary(op: ast.unaryop, value: Any, where: tuple[str, int]) -> Any:
    if isinstance(op, ast.USub) and isinstance(value, int | float):
        return -value
    if isinstance(op, ast.UAdd) and isinstance(value, int | float):
        return value
    if isinstance(op, ast.Invert) and isinstance(value, int):
        return ~value
    raise Unknown(f"unary {type(op).__name__} not evaluated", *where)
