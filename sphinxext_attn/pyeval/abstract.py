"""An abstract integer argument: the evaluator runs a predicate once per case.

``supports_head_size(h)`` is asked with an :class:`AbstractInt` standing for
every positive head size at once. The value is ``(scale * x + offset)``,
optionally ``% mod``, of the unknown ``x``. Where the code compares it
(``h >= 32``, ``h % 8 != 0``, ``h in (64, 128)``) the :class:`Explorer`
splits the sizes still possible into those that make the test true and those
that make it false (:mod:`.intsets`); when both remain, the run takes one side
and the explorer runs the predicate again for the other, so each run follows
one path with the exact set of sizes that lead down it. Anything else done
with the value (arithmetic the domain does not keep, a builtin, formatting,
hashing) is :class:`Unknown` with its place, never a guess.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from fractions import Fraction

from sphinxext_attn.pyeval.intsets import IntSet, TooComplex, run
from sphinxext_attn.pyeval.values import EnumMember, LimitExceeded, Raised, Unknown, Value

Where = tuple[str, int]
#: Most paths one question may take before it is given up as too many cases.
MAX_PATHS = 256
#: Builtins that treat an abstract int as Python treats an int (the rest: unknown).
BUILTINS = frozenset({"isinstance", "int", "bool", "all", "any", "max", "min", "sorted"})


class Explorer:
    """The sizes still possible on this run, and the choices made at each fork."""

    def __init__(self, trace: list[bool]) -> None:
        self.trace = trace
        self.forks = 0
        self.current = IntSet.everything()

    def decide(self, true_set: IntSet, where: Where) -> bool:
        """Whether the test holds on this path (the sizes left narrowed to match)."""
        try:
            inside = self.current & true_set
            outside = self.current - true_set
        except TooComplex as exc:
            raise Unknown(
                f"head sizes tested in a way too complex to keep ({exc})", *where
            ) from None
        if not outside:
            return True
        if not inside:
            return False
        if self.forks == len(self.trace):
            self.trace.append(True)
        choice = self.trace[self.forks]
        self.forks += 1
        self.current = inside if choice else outside
        return choice


class AbstractInt:
    """``(scale * x + offset) % mod`` (``mod`` None: no remainder) of the unknown x."""

    __slots__ = ("explorer", "mod", "offset", "scale")

    def __init__(
        self, explorer: Explorer, scale: int = 1, offset: int = 0, mod: int | None = None
    ) -> None:
        self.explorer = explorer
        self.scale = scale
        self.offset = offset
        self.mod = mod

    def __repr__(self) -> str:
        text = f"{self.scale}*x+{self.offset}"
        return f"({text}) % {self.mod}" if self.mod else text

    def __hash__(self) -> int:
        raise Unknown("a head size used as a key is not evaluated")

    def __eq__(self, other: object) -> bool:
        raise Unknown("a head size compared outside the evaluator's operators")

    # ``min``/``max``/``sorted`` order their items natively: each test is a decision.
    # They ask ``<`` and ``>`` only (reflected when the number is on the left); a
    # sequence ordered natively compares its items with ``==`` first, which gives up
    def __lt__(self, other: Value) -> bool:
        return compare(ast.Lt(), self, other, ("", 0))

    def __gt__(self, other: Value) -> bool:
        return compare(ast.Gt(), self, other, ("", 0))

    def truth(self, where: Where) -> bool:
        return compare(ast.NotEq(), self, 0, where)


def _guard(make: Callable[[], IntSet], where: Where) -> IntSet:
    try:
        return make()
    except TooComplex as exc:
        raise Unknown(f"head sizes tested in a way too complex to keep ({exc})", *where) from None


def _number(value: Value, where: Where) -> int | float | None:
    """A plain number the abstract value may be compared with; None: never equal."""
    if isinstance(value, EnumMember) and value.plain:
        value = value.value
    if isinstance(value, bool | int):
        return int(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise Unknown("a head size compared with an infinite or nan float", *where)
    if isinstance(value, str) or value is None:
        return None
    raise Unknown(f"a head size compared with {type(value).__name__}", *where)


#: ``value OP c`` written as ``c OP' value`` (operands swapped).
_SWAPPED = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}
_TESTS: dict[type[ast.cmpop], Callable[[Value, Value], bool]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
}


def compare(op: ast.cmpop, left: Value, right: Value, where: Where) -> bool:
    """``left OP right`` with one side abstract: decided on this path."""
    if isinstance(right, AbstractInt) and not isinstance(left, AbstractInt):
        swapped = _SWAPPED.get(type(op))
        return compare(swapped() if swapped else op, right, left, where)
    if not isinstance(left, AbstractInt) or isinstance(right, AbstractInt):
        raise Unknown("two head sizes compared with each other are not evaluated", *where)
    number = _number(right, where)
    test = _TESTS[type(op)]
    if number is None:
        if isinstance(op, ast.Eq | ast.NotEq):
            return isinstance(op, ast.NotEq)  # an int never equals a string or None
        raise Raised("TypeError", f"'{type(op).__name__}' between int and {type(right).__name__}")
    if left.mod is not None:
        return left.explorer.decide(_by_residue(left, lambda v: test(v, number), where), where)
    return left.explorer.decide(_solve(left, op, number, where), where)


def _by_residue(value: AbstractInt, test: Callable[[int], bool], where: Where) -> IntSet:
    """The x whose remainder ``(scale * x + offset) % mod`` passes ``test`` (it
    depends on ``x % mod`` only)."""
    mod = value.mod or 1
    residues = [r for r in range(mod) if test((value.scale * r + value.offset) % mod)]
    return _guard(lambda: IntSet.of([run(1, None, mod, residues)]), where)


def _solve(value: AbstractInt, op: ast.cmpop, c: float, where: Where) -> IntSet:
    """The x with ``scale * x + offset OP c``, as a set (exact: fractions, no floats)."""
    q = (Fraction(c) - value.offset) / value.scale
    kind = type(op)
    if value.scale < 0:  # dividing by a negative number turns the test round
        kind = _SWAPPED.get(kind, kind)
    if kind in (ast.Eq, ast.NotEq):
        equal = IntSet.points([int(q)] if q.denominator == 1 else [])
        return equal if kind is ast.Eq else _guard(equal.complement, where)
    bounds = {
        ast.Gt: (math.floor(q) + 1, None),
        ast.GtE: (math.ceil(q), None),
        ast.Lt: (1, math.ceil(q) - 1),
        ast.LtE: (1, math.floor(q)),
    }
    lo, hi = bounds[kind]
    return _guard(lambda: IntSet.of([run(lo, hi)]), where)


def member(item: AbstractInt, container: Value, where: Where) -> bool:
    """``item in container`` for a collection of plain values (or a range)."""
    if isinstance(container, range):
        values: list[Value] = []
        if item.mod is None and (item.scale, item.offset) == (1, 0) and container.step > 0:
            start, stop, step = container.start, container.stop, container.step
            found = _guard(lambda: IntSet.of([run(start, stop - 1, step, [start % step])]), where)
            return item.explorer.decide(found, where)
        if len(container) > 4096:
            raise Unknown("a head size tested against a long range", *where)
        values = list(container)
    elif isinstance(container, dict | list | tuple | set | frozenset):
        values = list(container)  # a dict: its keys
    else:
        kind = type(container).__name__
        raise Unknown(f"a head size tested for membership in {kind}", *where)
    numbers = {n for v in values if (n := _number(v, where)) is not None}
    if item.mod is not None:
        found = _by_residue(item, lambda v: v in numbers, where)
    else:
        found = IntSet()
        for n in numbers:  # more separate sizes than a set keeps: unknown
            found = _guard(lambda: found | _solve(item, ast.Eq(), n, where), where)  # noqa: B023
    return item.explorer.decide(found, where)


def binop(op: ast.operator, left: Value, right: Value, where: Where) -> Value:
    """Arithmetic with an abstract int: ``x + c``, ``c * x``, ``x % m``, ``-x``."""
    if isinstance(left, AbstractInt) and isinstance(right, AbstractInt):
        raise Unknown("arithmetic on two head sizes is not evaluated", *where)
    sym_left = isinstance(left, AbstractInt)
    sym, other = (left, right) if sym_left else (right, left)
    if isinstance(other, EnumMember) and other.plain:
        other = other.value
    if not isinstance(other, int):
        kind = type(other).__name__
        raise Unknown(f"head size {type(op).__name__} {kind} not evaluated", *where)
    c = int(other)
    if isinstance(op, ast.Mod) and sym_left:
        if c == 0:
            raise Raised("ZeroDivisionError", "integer modulo by zero")
        if c < 0:
            raise Unknown("a head size modulo a negative number is not evaluated", *where)
        if sym.mod is None:
            return _made(sym, sym.scale, sym.offset, c, where)
        if sym.mod % c == 0:
            return _made(sym, sym.scale, sym.offset, c, where)
    elif sym.mod is None:
        if isinstance(op, ast.Add):
            return _made(sym, sym.scale, sym.offset + c, None, where)
        if isinstance(op, ast.Sub):
            if sym_left:
                return _made(sym, sym.scale, sym.offset - c, None, where)
            return _made(sym, -sym.scale, c - sym.offset, None, where)
        if isinstance(op, ast.Mult):
            return _made(sym, sym.scale * c, sym.offset * c, None, where)
    raise Unknown(f"head size arithmetic ({type(op).__name__}) not evaluated", *where)


def _made(sym: AbstractInt, scale: int, offset: int, mod: int | None, where: Where) -> Value:
    if abs(scale) > 2**32 or abs(offset) > 2**32 or (mod or 0) > 4096:
        raise LimitExceeded(
            "head size arithmetic with numbers too large to keep", *where, kind="size"
        )
    if scale == 0:  # x * 0: a plain number again (a remainder keeps a nonzero scale)
        return offset
    return AbstractInt(sym.explorer, scale, offset, mod)


def explore(ask: Callable[[AbstractInt], bool], where: Where) -> IntSet:
    """The exact set of positive x for which ``ask`` answers true: one run per path."""
    trace: list[bool] = []
    accepted = IntSet()
    for _ in range(MAX_PATHS):
        explorer = Explorer(trace)
        if ask(AbstractInt(explorer)):
            accepted = _guard(lambda: accepted | explorer.current, where)  # noqa: B023 (run now)
        del trace[explorer.forks :]
        while trace and not trace[-1]:
            trace.pop()
        if not trace:
            return accepted
        trace[-1] = False
    raise Unknown(f"the head size rule has more than {MAX_PATHS} cases", *where)
