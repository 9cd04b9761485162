"""Sets of positive integers as abstract interpreters keep them: intervals with
congruences.

A :class:`Run` is ``{x : lo <= x <= hi, x % mod in residues}`` (``hi`` None: no
upper bound); an :class:`IntSet` is a finite union of runs. The domain is closed
under intersection, union and complement (within the positive integers), so a
predicate over a head size (``head_size % 8 == 0 and head_size <= 512``) is
turned into the exact set it accepts without asking any size one by one.
Moduli are bounded (:data:`MAX_MOD`): a set that would need a larger period is
:class:`TooComplex`, which the caller reports as an unknown with its reason.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

#: Largest period a set may have (``x % 4096``); beyond it the set is not kept.
MAX_MOD = 4096
#: Most runs a set may be made of.
MAX_RUNS = 256


_ZERO = frozenset({0})


class TooComplex(Exception):
    """The set would be larger than the domain keeps (a period or run count)."""


@dataclass(frozen=True)
class Run:
    """``{x : lo <= x <= hi, x % mod in residues}``; build with :func:`run`."""

    lo: int
    hi: int | None
    mod: int
    residues: frozenset[int]

    def __contains__(self, x: object) -> bool:
        return (
            isinstance(x, int)
            and x >= self.lo
            and (self.hi is None or x <= self.hi)
            and x % self.mod in self.residues
        )

    def first(self) -> int:
        return self.lo  # :func:`run` moves ``lo`` onto a member

    def members(self) -> Iterator[int]:
        """Every member, smallest first (endless when unbounded)."""
        base = self.lo - self.lo % self.mod
        while True:
            for r in sorted(self.residues):
                x = base + r
                if self.hi is not None and x > self.hi:
                    return
                if x >= self.lo:
                    yield x
            base += self.mod


def _order(r: Run) -> tuple[int, bool, int, int, tuple[int, ...]]:
    """Runs in order of their first member, then their end (an endless run last),
    period and residues: a total order, where comparing the fields themselves would
    compare an end with None, and residue sets by inclusion."""
    return (r.lo, r.hi is None, 0 if r.hi is None else r.hi, r.mod, tuple(sorted(r.residues)))


def _period(mod: int, residues: frozenset[int]) -> tuple[int, frozenset[int]]:
    """The smallest period of a residue pattern (``{0, 8} mod 16`` is ``{0} mod 8``)."""
    for d in range(1, mod):  # none shorter: ``mod`` itself (the residues are reduced)
        if mod % d == 0 and all((r + d) % mod in residues for r in residues):
            return d, frozenset(r % d for r in residues)
    return mod, residues


def run(lo: int, hi: int | None, mod: int = 1, residues: Iterable[int] = (0,)) -> Run | None:
    """A normalised run, or None when it is empty: the smallest period, ``lo`` and
    ``hi`` moved onto members, a single member written as ``x..x``."""
    if mod > MAX_MOD:
        raise TooComplex(f"a period of {mod}")
    lo = max(lo, 1)
    kept = frozenset(r % mod for r in residues)
    if mod == 1:  # an interval
        return None if not kept or (hi is not None and hi < lo) else Run(lo, hi, 1, _ZERO)
    if not kept or (hi is not None and hi < lo):
        return None
    mod, kept = _period(mod, kept)
    lo = next(lo + k for k in range(mod) if (lo + k) % mod in kept)
    if hi is not None:
        hi = next((hi - k for k in range(mod) if (hi - k) % mod in kept), lo - 1)
        if hi < lo:
            return None
        if hi == lo:
            return Run(lo, lo, 1, frozenset({0}))
    return Run(lo, hi, mod, kept)


def _meet(a: Run, b: Run) -> Run | None:
    if a.lo == a.hi or b.lo == b.hi:  # a single size: in the other run or not
        point, other = (a, b) if a.lo == a.hi else (b, a)
        return point if point.lo in other else None
    if (a.hi is not None and a.hi < b.lo) or (b.hi is not None and b.hi < a.lo):
        return None
    mod = math.lcm(a.mod, b.mod)
    if mod > MAX_MOD:
        raise TooComplex(f"a period of {mod}")
    residues = [x for x in range(mod) if x % a.mod in a.residues and x % b.mod in b.residues]
    hi = b.hi if a.hi is None else a.hi if b.hi is None else min(a.hi, b.hi)
    return run(max(a.lo, b.lo), hi, mod, residues)


def _outside(a: Run) -> list[Run]:
    """The positive integers not in ``a``, as runs."""
    parts = [run(1, a.lo - 1)]
    if a.hi is not None:
        parts.append(run(a.hi + 1, None))
    others = [r for r in range(a.mod) if r not in a.residues]
    parts.append(run(a.lo, a.hi, a.mod, others))
    return [p for p in parts if p is not None]


@dataclass(frozen=True)
class IntSet:
    """A finite union of runs (disjoint, sorted); the empty tuple is the empty set."""

    runs: tuple[Run, ...] = ()

    @staticmethod
    def of(parts: Iterable[Run | None]) -> IntSet:
        runs = sorted({p for p in parts if p is not None}, key=_order)
        if len(runs) > MAX_RUNS:
            raise TooComplex(f"{len(runs)} separate pieces")
        return IntSet(tuple(sorted(_combined(list(_merged(runs))), key=_order)))

    @staticmethod
    def everything() -> IntSet:
        return EVERYTHING

    @staticmethod
    def points(values: Iterable[int]) -> IntSet:
        return IntSet.of(run(v, v) for v in values)

    def __bool__(self) -> bool:
        return bool(self.runs)

    def __contains__(self, x: object) -> bool:
        return any(x in r for r in self.runs)

    def first(self) -> int | None:
        return min((r.first() for r in self.runs), default=None)

    def is_everything(self) -> bool:
        return self == EVERYTHING

    def __and__(self, other: IntSet) -> IntSet:
        if self == EVERYTHING or not other:
            return other
        if other == EVERYTHING or not self:
            return self
        return IntSet.of(_meet(a, b) for a in self.runs for b in other.runs)

    def __or__(self, other: IntSet) -> IntSet:
        if not self or not other:
            return self or other
        return IntSet.of([*self.runs, *other.runs])

    def complement(self) -> IntSet:
        return EVERYTHING - self

    def __sub__(self, other: IntSet) -> IntSet:
        pieces = list(self.runs)
        for cut in other.runs:
            pieces = [q for p in pieces for q in _minus(p, cut)]
            if len(pieces) > MAX_RUNS:
                raise TooComplex(f"{len(pieces)} separate pieces")
        return IntSet.of(pieces)


#: Every positive integer.
EVERYTHING = IntSet((Run(1, None, 1, frozenset({0})),))


def _merged(runs: list[Run]) -> Iterator[Run]:
    """Disjoint runs: overlaps split off, neighbours with one pattern joined."""
    out: list[Run] = []
    for r in runs:
        pieces = [r]
        for kept in out:
            pieces = [q for p in pieces for q in _minus(p, kept)]
        out.extend(pieces)
    out.sort(key=_order)
    joined: list[Run] = []
    for r in out:
        last = joined[-1] if joined else None
        if last is not None and _joins(last, r):
            hi = None if last.hi is None or r.hi is None else max(last.hi, r.hi)
            joined[-1] = Run(last.lo, hi, last.mod, last.residues)
        elif last is not None and last.lo == last.hi and r.lo != r.hi:
            step = _step_before(r, last.lo)  # a single point that starts a run
            joined[-1:] = [step] if step is not None else [last, r]
        else:
            joined.append(r)
    return iter(joined)


def _combined(runs: list[Run]) -> list[Run]:
    """Runs that end alike written as one pattern where nothing is added by it
    (``%4`` and ``6 mod 12`` are ``{0, 4, 6, 8} mod 12``: multiples of 4 or 6)."""
    out: list[Run] = []
    for r in runs:
        for i, kept in enumerate(out):
            both = _both(kept, r)
            if both is not None:
                out[i] = both
                break
        else:
            out.append(r)
    return out


def _both(a: Run, b: Run) -> Run | None:
    if a.hi != b.hi or a.lo == a.hi or b.lo == b.hi:
        return None
    lo = min(a.lo, b.lo)
    mod = math.lcm(a.mod, b.mod)
    if mod > MAX_MOD:
        return None
    if any((p := run(lo, a.hi, r.mod, r.residues)) is None or p.lo != r.lo for r in (a, b)):
        return None  # one of them starts later than its pattern would
    residues = [x for x in range(mod) if x % a.mod in a.residues or x % b.mod in b.residues]
    return run(lo, a.hi, mod, residues)


def _minus(a: Run, b: Run) -> list[Run]:
    if _meet(a, b) is None:
        return [a]
    return [p for o in _outside(b) if (p := _meet(a, o)) is not None]


def _next_member(r: Run, after: int) -> int:
    return next(after + k for k in range(1, r.mod + 1) if (after + k) % r.mod in r.residues)


def _joins(a: Run, b: Run) -> bool:
    """``b`` continues ``a`` with the same pattern (no member missing between)."""
    if (a.mod, a.residues) != (b.mod, b.residues) or a.lo == a.hi or b.lo == b.hi:
        return False
    return a.hi is None or b.lo <= _next_member(a, a.hi)


def _step_before(r: Run, point: int) -> Run | None:
    """``r`` grown down by ``point`` when the point is its pattern's member just before."""
    if point % r.mod in r.residues and _next_member(r, point) == r.lo:
        return Run(point, r.hi, r.mod, r.residues)
    return None
