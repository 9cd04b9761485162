"""Operators of the evaluated subset, with size limits.

Every result that could grow without bound (``10**10**10``, ``"x" * 10**9``,
``1 << 10**9``) is checked before it is computed; what would be too large is
:class:`Unknown`, so memory stays bounded whatever the analysed code says.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from typing import TypeVar

from sphinxext_attn.pyeval import abstract, abstract_str
from sphinxext_attn.pyeval.abstract_str import AbstractStr
from sphinxext_attn.pyeval.plain import (  # what plain Python sees
    check_not_auto,
    plain_value,
)
from sphinxext_attn.pyeval.values import (
    Budget,
    EnumMember,
    External,
    Instance,
    LimitExceeded,
    Raised,
    Unknown,
    Value,
    line_of,
)

T = TypeVar("T")

#: Largest integer the evaluator builds, in bits.
MAX_INT_BITS = 4096
#: Longest string, list or tuple the evaluator builds.
MAX_ITEMS = 100_000
#: Bytes one step of the budget may allocate: copies are charged by their size.
STEP_BYTES = 512
#: Deepest nesting of values a native walk is allowed to descend.
MAX_NESTING = 1000
#: Values a native walk (hash, ``==``, ordering, ``str``) descends into.
NESTED = (list, tuple, dict, set, frozenset, Instance)

BINOPS: dict[type[ast.operator], Callable[[Value, Value], Value]] = {
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


def node_where(node: ast.AST, path: str) -> tuple[str, int]:
    """``(path, line)`` of a node for a reason (a synthetic node has line 0)."""
    return path, line_of(node)


def _size(value: Value) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value.bit_length()
    return 0


def _length(value: Value) -> int:
    return len(value) if isinstance(value, str | list | tuple | bytes) else 0


def check_size(value: T, where: tuple[str, int]) -> T:
    if isinstance(value, int) and not isinstance(value, bool) and _size(value) > MAX_INT_BITS:
        raise LimitExceeded("integer too large to evaluate", *where, kind="size")
    if _length(value) > MAX_ITEMS:
        raise LimitExceeded("sequence too long to evaluate", *where, kind="size")
    return value


def footprint(value: Value) -> int:
    """Bytes a new value of this size takes, roughly (what its copy is charged)."""
    if isinstance(value, str | bytes):
        return len(value)
    if isinstance(value, list | tuple):
        return 8 * len(value)
    if isinstance(value, dict | set | frozenset):
        return 32 * len(value)
    return _size(value) // 8


def charge(budget: Budget, nbytes: int, where: tuple[str, int]) -> None:
    """Charge the budget for allocating ``nbytes`` (before the allocation)."""
    if nbytes >= STEP_BYTES:
        budget.spend(nbytes // STEP_BYTES, where)


def paid(value: T, budget: Budget, where: tuple[str, int]) -> T:
    """``value``, size-checked, with its allocation charged to the budget."""
    check_size(value, where)
    charge(budget, footprint(value), where)
    return value


def weigh(value: Value, budget: Budget, where: tuple[str, int], text: bool = False) -> None:
    """Charge the budget for a native walk of ``value`` (hash, ``==``, ordering,
    ``str``) before it is made: a step per nested container, counted as often as
    the walk visits it (``t = (t, t)`` sixty times is 2**60 visits, not 60).
    Instances compared by identity are not walked, except to print them (``text``)."""
    if not isinstance(value, NESTED):
        return
    steps = budget.steps
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_NESTING:  # hashing a deeper tuple can overflow the C stack
            raise LimitExceeded("value nested too deeply", *where, kind="nesting")
        if isinstance(item, Instance):
            parts: Value = item.items
            if parts is None:
                parts = tuple(item.fields.values()) if text or item.by_fields else ()
        elif isinstance(item, dict):
            parts = (*item, *item.values())
        else:
            parts = item
        steps -= 1 + len(parts) * 8 // STEP_BYTES
        if steps < 0:
            budget.steps = steps
            raise LimitExceeded("step budget exhausted", *where)
        stack.extend((p, depth + 1) for p in parts if isinstance(p, NESTED))
    budget.steps = steps


def text(value: Value, budget: Budget, where: tuple[str, int]) -> str:
    """``str(value)`` for a message, its walk charged first."""
    weigh(value, budget, where, text=True)
    return str(value)[:1000]


def binop(
    op: ast.operator, left: Value, right: Value, where: tuple[str, int], budget: Budget
) -> Value:
    if isinstance(left, abstract.AbstractInt) or isinstance(right, abstract.AbstractInt):
        return abstract.binop(op, left, right, where)
    abstract_str.concretize(left, right)
    fn = BINOPS.get(type(op))
    if fn is None:
        raise Unknown(f"operator {type(op).__name__} not evaluated", *where)
    if isinstance(op, ast.BitOr) and not (isinstance(left, int) and isinstance(right, int)):
        if isinstance(left, set | frozenset | dict) and isinstance(right, type(left)):
            charge(budget, footprint(left) + footprint(right), where)
            return fn(left, right)
        raise Unknown("| on these values is not evaluated (a type union?)", *where)
    for value in (left, right):
        if not isinstance(value, int | float | str | list | tuple | set | frozenset | dict):
            raise Unknown(f"arithmetic on {type(value).__name__} not evaluated", *where)
    if isinstance(op, ast.Pow) and isinstance(left, int) and isinstance(right, int):
        if right < 0:
            if not left:
                _zero_div()
            try:
                return check_size(float(left) ** right, where)
            except OverflowError as exc:  # an int too large for a float
                raise Raised("OverflowError", str(exc)) from None
        bits = abs(left).bit_length() * right  # (0, 1 and -1 to any power stay small)
        if abs(left) > 1 and bits > MAX_INT_BITS:
            raise LimitExceeded("integer too large to evaluate", *where, kind="size")
    if isinstance(op, ast.LShift) and isinstance(right, int) and right > MAX_INT_BITS:
        raise LimitExceeded("integer too large to evaluate", *where, kind="size")
    if isinstance(op, ast.Mult):
        for seq, count in ((left, right), (right, left)):
            if _length(seq) and isinstance(count, int) and _length(seq) * count > MAX_ITEMS:
                raise LimitExceeded("sequence too long to evaluate", *where, kind="size")
            if isinstance(count, int):  # (nothing is charged for a count of 0 or less)
                charge(budget, footprint(seq) * count, where)
    if isinstance(op, ast.Add):
        if _length(left) + _length(right) > MAX_ITEMS:
            raise LimitExceeded("sequence too long to evaluate", *where, kind="size")
        charge(budget, footprint(left) + footprint(right), where)
    if isinstance(op, ast.Mod) and isinstance(left, str):
        charge(budget, printf_size(left, right, where), where)
    try:
        result = fn(left, right)
    except ZeroDivisionError:
        _zero_div()
    except (TypeError, ValueError, OverflowError) as exc:
        raise Raised(type(exc).__name__, str(exc)) from None
    if isinstance(result, complex):
        raise Unknown("complex numbers not evaluated", *where)
    return check_size(result, where)


_CONVERSION = re.compile(r"%(?:\([^)]*\))?[-+ #0]*(\*|\d+)?(?:\.(\*|\d*))?[hlL]?(.)?", re.S)


def printf_size(fmt: str, args: Value, where: tuple[str, int]) -> int:
    """An upper bound of the length of ``fmt % args``, before it is built: too
    long or not a plain format (``*`` widths, arguments that are not scalars)
    is unknown, as Python's ``str()`` of nested values is not bounded."""
    values = args if isinstance(args, tuple) else (args,)
    if not all(isinstance(v, int | float | str) for v in values):
        raise Unknown("% formatting of these values not evaluated", *where)
    size = len(fmt) + sum(len(str(v)) for v in values)
    for match in _CONVERSION.finditer(fmt):
        width, precision, _ = match.groups()
        if "*" in (width, precision) or len(width or "") + len(precision or "") > 12:
            raise Unknown("% formatting with this width not evaluated", *where)
        size += int(width or 0) + int(precision or 0) + 400
        if size > MAX_ITEMS:
            raise LimitExceeded("string too long to evaluate", *where, kind="size")
    return size


def _zero_div() -> Value:
    raise Raised("ZeroDivisionError", "division by zero")


#: Types whose ``==`` is Python's own, constant-size (strings are size-checked).
SCALARS = frozenset({str, int, float, bool, type(None)})


def torch_symbol(value: External) -> bool:
    """A torch object (a dtype, a device type): never equal to plain data, and
    printed as its name (``str(torch.bfloat16)`` is ``"torch.bfloat16"``)."""
    return value.qualname.startswith("torch.")


def equal(left: Value, right: Value, budget: Budget, where: tuple[str, int]) -> bool:
    """``left == right``, a step for each item of the sequences compared."""
    if left is right and not isinstance(left, float):  # nan is not equal to itself
        return True
    if type(left) in SCALARS and type(right) in SCALARS:
        return bool(left == right)  # plain data, compared natively at no extra cost
    if isinstance(left, abstract.AbstractInt) or isinstance(right, abstract.AbstractInt):
        return abstract.compare(ast.Eq(), left, right, where)
    if type(left) is AbstractStr or type(right) is AbstractStr:
        return abstract_str.equal(left, right)
    for ext, other in ((left, right), (right, left)):
        if isinstance(ext, External) and type(other) in SCALARS and not torch_symbol(ext):
            # ``sys.platform == "linux"``: the value outside the tree is not known
            raise Unknown(f"{ext.qualname} compared with {other!r} (outside the tree)", *where)
    if isinstance(left, Instance) and left.items is not None:
        left = left.items  # a named tuple compares as a tuple
    if isinstance(right, Instance) and right.items is not None:
        right = right.items
    if isinstance(left, EnumMember) or isinstance(right, EnumMember):
        both = isinstance(left, EnumMember) and isinstance(right, EnumMember)
        if both and (left.cls is right.cls or not (left.plain and right.plain)):
            return left.cls is right.cls and left.name == right.name
        a, b = plain_value(left), plain_value(right)
        check_not_auto(a, where)
        check_not_auto(b, where)
        return not isinstance(a, EnumMember) and not isinstance(b, EnumMember) and a == b
    if isinstance(left, list | tuple) and isinstance(right, list | tuple):
        if type(left) is not type(right) or len(left) != len(right):
            return False
        budget.spend(1 + len(left), where)
        return all(a is b or equal(a, b, budget, where) for a, b in zip(left, right, strict=True))
    if isinstance(left, Instance) or isinstance(right, Instance):
        if not (isinstance(left, Instance) and isinstance(right, Instance)):
            return False
        for inst in (left, right):
            if inst.own_eq:  # (called by objects.compare, not here)
                raise Unknown(
                    f"== of {inst.cls.name} instances by their __eq__ not evaluated", *where
                )
        if not (left.by_fields and left.cls is right.cls):
            return False  # compared by identity
        return _record_equal(left, right, budget, where)
    weigh(left, budget, where)
    weigh(right, budget, where)
    try:
        return bool(left == right)
    except RecursionError:
        raise LimitExceeded("value nested too deeply", *where, kind="nesting") from None
    except Unknown:  # an abstract head size inside a dict or set: not a plain False
        raise
    except Exception:  # noqa: BLE001 - values are plain data here
        return False


def check_compared(inst: Instance, where: tuple[str, int]) -> None:
    """A dataclass's ``==`` reads its ``compare=True`` fields only: one holding other
    names (set by ``__post_init__`` or its own ``__init__``) is not evaluated, nor
    one missing a compared field (AttributeError, or True for itself on 3.13)."""
    if not inst.fields.keys() <= inst.declared:
        raise Unknown(f"== of {inst.cls.name} instances holding more than fields", *where)
    for name in inst.compared:
        if name not in inst.fields:
            raise Unknown(f"== of {inst.cls.name} instances without field {name!r}", *where)


def _record_equal(left: Instance, right: Instance, budget: Budget, where: tuple[str, int]) -> bool:
    """Two instances of one dataclass: their compared fields, in order."""
    check_compared(left, where)
    check_compared(right, where)
    a = tuple(left.fields[name] for name in left.compared)
    b = tuple(right.fields[name] for name in right.compared)
    for x, y in zip(a, b, strict=True):
        if x is y and isinstance(x, float) and x != x:
            # one nan in both: a tuple of fields (3.11, 3.12) or field by field (3.13+)
            raise Unknown(f"== of {left.cls.name} instances holding one nan", *where)
    return equal(a, b, budget, where)


def contains(container: Value, item: Value, where: tuple[str, int], budget: Budget) -> bool:
    if isinstance(item, abstract.AbstractInt):
        budget.spend(1 + _length(container), where)
        return abstract.member(item, container, where)
    # (an abstract string on either side is compared by :func:`.abstract_str.compare`)
    abstract_str.concretize(container)
    if isinstance(container, str):
        if isinstance(item, EnumMember) and item.plain and isinstance(item.value, str):
            item = item.value  # a str enum's member is a str
        if not isinstance(item, str):
            raise Raised("TypeError", "'in <string>' requires string")
        return item in container
    if isinstance(container, dict | set | frozenset):
        weigh(item, budget, where)
        try:
            hash(item)  # looked up by hash: an unhashable item is an error, not False
        except TypeError:
            raise Raised("TypeError", f"unhashable type: '{type(item).__name__}'") from None
    if isinstance(container, dict | list | tuple | set | frozenset):
        budget.spend(1 + len(container), where)  # an item compared with each
        return any(x is item or equal(item, x, budget, where) for x in container)
    if isinstance(container, range):
        return item in container
    raise Unknown(f"membership in {type(container).__name__} not evaluated", *where)


ORDER = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}


def _deep_plain(value: Value) -> Value:
    """Sequences ordered item by item see named tuples and str/int enum members
    inside them as tuples, strings and ints too (their size already weighed)."""
    value = plain_value(value)
    if isinstance(value, list | tuple):
        return type(value)(_deep_plain(v) for v in value)
    return value


def order(
    op: ast.cmpop, left: Value, right: Value, where: tuple[str, int], budget: Budget
) -> bool:
    if isinstance(left, abstract.AbstractInt) or isinstance(right, abstract.AbstractInt):
        return abstract.compare(op, left, right, where)
    abstract_str.concretize(left, right)
    weigh(left, budget, where)
    weigh(right, budget, where)
    a, b = _deep_plain(left), _deep_plain(right)
    ok = (int, float, str, tuple, list)
    if not (isinstance(a, ok) and isinstance(b, ok)):
        raise Unknown(
            f"ordering of {type(a).__name__} and {type(b).__name__} not evaluated", *where
        )
    try:
        return bool(ORDER[type(op)](a, b))
    except TypeError as exc:
        raise Raised("TypeError", str(exc)) from None


def unary(op: ast.unaryop, value: Value, where: tuple[str, int]) -> Value:
    if isinstance(value, abstract.AbstractInt) and isinstance(op, ast.USub | ast.UAdd):
        return abstract.binop(ast.Mult(), value, -1 if isinstance(op, ast.USub) else 1, where)
    abstract_str.concretize(value)
    if isinstance(op, ast.USub) and isinstance(value, int | float):
        return -value
    if isinstance(op, ast.UAdd) and isinstance(value, int | float):
        return +value  # +True is 1
    if isinstance(op, ast.Invert) and isinstance(value, int):
        return ~int(value)  # ~True is -2; int() keeps Python 3.12+ from warning about it
    raise Unknown(f"unary {type(op).__name__} not evaluated", *where)
