"""The small helpers that index the selector's grid (points, configurations,
interned lists, recombined reasons); its shape is :mod:`..model.selector_shape`.

Apart from :mod:`.selector_table` so that the prediction and the repair of
the table (:mod:`.selector_predict`, :mod:`.selector_repair`), which the
table's builder calls, can index the grid without importing the builder.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from sphinxext_attn.model.selection import Config
from sphinxext_attn.model.selector_shape import (
    DIMS,
    FLAGS,
    GRID,
    LAYER_GRID,
    RULES,
    SEARCH_ORDER,
    UNKNOWN,
    Grid,
    PriorityTable,
    SelectorData,
    query_value,
)

#: what an :class:`Interner` keeps: reasons (text) or lists of names
T = TypeVar("T", str, list[str])

__all__ = [
    "DIMS",
    "FLAGS",
    "GRID",
    "LAYER_GRID",
    "RULES",
    "SEARCH_ORDER",
    "UNKNOWN",
    "Grid",
    "query_value",
]


def dims_of(grid: Grid) -> tuple[str, ...]:
    """A grid's dimensions other than the capability (:data:`DIMS`, then any others)."""
    return DIMS if grid is GRID else tuple(d for d in grid if d != "capability")


def default_point(grid: Grid) -> list[int]:
    base = Config()
    out = []
    for dim in dims_of(grid):
        values = grid[dim]
        want = getattr(base, dim)
        out.append(values.index(want) if want in values else 0)
    return out


def list_at(priorities: PriorityTable, sizes: Sequence[int], point: Sequence[int]) -> int:
    """The priority list (its index) at ``point``: the table is in mixed radix over
    its key dimensions (``sizes``: how many values each dimension has)."""
    index = 0
    for d in priorities["keys"]:
        index = index * sizes[d] + point[d]
    return int(priorities["table"][index])


def rule_outcome(table: SelectorData, cap: str, point: Sequence[int]) -> list[str]:
    """``["selected", NAME]``, ``["raised", MESSAGE]`` or ``["unknown", WHY]`` at
    ``point``: the grid's settings, then whether each of the table's ``checks``
    accepts (0) or refuses (1)."""
    sizes = [len(values) for dim, values in table["dims"] if dim != "capability"]
    sizes += [2] * len(table.get("checks", []))
    return list(table["lists"][list_at(table["caps"][cap]["priorities"], sizes, point)])


def config_at(grid: Grid, capability: str, point: Sequence[int]) -> Config:
    values = {dim: grid[dim][i] for dim, i in zip(dims_of(grid), point, strict=True)}
    return Config(capability=capability, **values)


@dataclass
class Interner(Generic[T]):
    """Strings (or lists of them) kept once, referred to by index."""

    items: list[T] = field(default_factory=list)
    index: dict[str | tuple[str, ...], int] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        """Items given (a table's texts, added to): each is found at its place."""
        for i, item in enumerate(self.items):
            self.index.setdefault(item if isinstance(item, str) else tuple(item), i)

    def __call__(self, item: T) -> int:
        key = item if isinstance(item, str) else tuple(item)
        if key not in self.index:
            self.index[key] = len(self.items)
            self.items.append(item if isinstance(item, str) else list(item))
        return self.index[key]


def combine(
    base: Sequence[int], factors: Iterable[Sequence[int]], order: Sequence[int]
) -> list[int]:
    """The baseline's reasons that every factor keeps, plus what each factor adds."""
    factors = list(factors)
    base_set = set(base)
    out = {r for r in base if all(r in f for f in factors)}
    out.update(r for f in factors for r in f if r not in base_set)
    rank = {r: i for i, r in enumerate(order)}
    return sorted(out, key=lambda r: rank.get(r, len(rank)))


def consistent_order(lists: Iterable[Sequence[int]]) -> list[int]:
    """One order of reasons consistent with every observed list (first-seen on ties)."""
    first: dict[int, int] = {}
    after: dict[int, set[int]] = {}
    for reasons in lists:
        for i, r in enumerate(reasons):
            first.setdefault(r, len(first))
            after.setdefault(r, set()).update(reasons[:i])
    out: list[int] = []
    left = sorted(first, key=first.__getitem__)
    while left:
        ready = [r for r in left if not (after[r] - set(out))] or left
        out.append(ready[0])
        left.remove(ready[0])
    return out


def with_value(point: Sequence[int], d: int, i: int) -> list[int]:
    out = list(point)
    out[d] = i
    return out


def size_of(grid: Grid, d: int) -> int:
    """How many values dimension ``d`` has: a grid dimension's, or two for a yes/no
    dimension after them (whether a backend's own check accepts: :mod:`.selector_checks`)."""
    dims = dims_of(grid)
    return len(grid[dims[d]]) if d < len(dims) else 2


def points(grid: Grid, base: Sequence[int], dims: Sequence[int]) -> Iterable[list[int]]:
    """Every point varying ``dims`` (mixed radix, the last varying fastest)."""
    for combo in itertools.product(*(range(size_of(grid, d)) for d in dims)):
        point = list(base)
        for d, i in zip(dims, combo, strict=True):
            point[d] = i
        yield point


def factor(
    grid: Grid,
    candidates: Sequence[int],
    ask: Callable[[list[int]], int],
    on_grow: Callable[[list[int]], None] | None = None,
    extra: int = 0,
) -> PriorityTable:
    """The dimensions (of ``candidates``) an answer depends on, found from the
    default point by growing the set until no other dimension changes the answer
    at any point; then the answers over those dimensions (``{"keys", "table"}``).
    ``on_grow`` sees each grown set (to refuse one too large); ``extra`` yes/no
    dimensions follow the grid's (:func:`size_of`), at their first value by default."""
    base = default_point(grid) + [0] * extra
    keys: list[int] = []
    grown = True
    while grown:
        grown = False
        for point in points(grid, base, keys):
            ref = ask(point)
            for d in (p for p in candidates if p not in keys):
                if any(
                    ask(with_value(point, d, i)) != ref
                    for i in range(size_of(grid, d))
                    if i != point[d]
                ):
                    keys = sorted([*keys, d])
                    grown = True
                    if on_grow is not None:
                        on_grow(keys)
                    break
            if grown:
                break
    return {"keys": keys, "table": [ask(p) for p in points(grid, base, keys)]}
