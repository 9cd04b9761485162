"""The builder of the selector's factored table on one platform (see
:mod:`.selector_table` for the factorisation, :mod:`.selector_variants` for the
tables a page needs).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Sequence

from sphinxext_attn.model.selector_shape import (
    BackendEntry,
    CapEntry,
    Entry,
    EntryKey,
    PriorityTable,
    SelectorData,
)
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.selector.grid import (
    GRID,
    SEARCH_ORDER,
    Grid,
    Interner,
    combine,
    config_at,
    consistent_order,
    default_point,
    dims_of,
    factor,
    query_value,
    with_value,
)
from sphinxext_attn.selector.probe import Prober
from sphinxext_attn.selector.repair import delta, repair


class TableBuilder:
    """Builds the factored table of one tree over a grid (see the module docstring)."""

    def __init__(
        self,
        selector: Selector,
        grid: Grid | None = None,
        prober: Prober | None = None,
    ):
        self.selector = selector
        self.prober = prober or Prober(selector)
        self.grid = grid or GRID
        self.reasons: Interner[str] = Interner()
        self.lists: Interner[list[str]] = Interner()
        self.probes = 0
        #: the machine facts (name -> value) each entry's questions read: key
        #: (capability, "") for the priority table, (capability, backend) for a backend
        self.facts: dict[EntryKey, dict[str, str]] = {}
        #: per entry, the points whose question read a machine fact, with the facts
        self.point_facts: dict[EntryKey, dict[tuple[int, ...], dict[str, str]]] = {}

    def scratch(self) -> TableBuilder:
        """A builder asking through this one's prober (its answers are kept there),
        with records of its own: what it interns and notes leaves this table alone."""
        return TableBuilder(self.selector, self.grid, self.prober)

    def learn_from(self, other: TableBuilder, differing: Collection[str] = ()) -> None:
        """Find backends as ``other`` (a table built for another setting) found them,
        and take its answers that read none of the facts ``differing``."""
        self.prober.learn_from(other.prober, differing)

    # -- priority lists ----------------------------------------------------------

    def _priorities(self, cap: str, point: Sequence[int]) -> int:
        self.prober.read = {}
        found = self.prober.priorities(config_at(self.grid, cap, point))
        self._note((cap, ""), point)
        return self.lists(found)

    def _note(self, key: EntryKey, point: Sequence[int]) -> None:
        read = self.prober.read
        self.facts.setdefault(key, {}).update(read)
        if read:
            self.point_facts.setdefault(key, {})[tuple(point)] = dict(read)

    def answer(self, cap: str, key: str, point: Sequence[int]) -> int | list[int]:
        """One question of an entry: the list (``key`` "") or a backend's reasons."""
        return self._priorities(cap, point) if not key else self.reasons_at(key, cap, point)

    def priority_table(self, cap: str) -> PriorityTable:
        dims = dims_of(self.grid)
        params = [dims.index(p) for p in self.prober.priority_params if p in dims]
        seen: dict[tuple[int, ...], int] = {}

        def ask(point: list[int]) -> int:
            key = tuple(point[d] for d in params)
            if key not in seen:
                seen[key] = self._priorities(cap, point)
            return seen[key]

        return factor(self.grid, params, ask)

    # -- rejection reasons -------------------------------------------------------

    def reasons_at(self, backend: str, cap: str, point: Sequence[int]) -> list[int]:
        self.probes += 1
        self.prober.read = {}
        found = self.prober.reasons(backend, config_at(self.grid, cap, point))
        self._note((cap, backend), point)
        return [self.reasons(r) for r in found]

    def backend_entry(self, backend: str, cap: str) -> BackendEntry:
        return factor_reasons(self.grid, lambda point: self.reasons_at(backend, cap, point))

    def entry(self, cap: str, key: str) -> Entry:
        """One entry of the table: the priority table (``key`` ""), or a backend's."""
        return self.priority_table(cap) if not key else self.backend_entry(key, cap)

    # -- the whole table ---------------------------------------------------------

    def entries(self, capabilities: Sequence[str]) -> dict[str, CapEntry]:
        """The priority table and every listed backend's entry, per capability."""
        caps: dict[str, CapEntry] = {}
        for cap in capabilities:
            prio = self.priority_table(cap)
            universe = sorted({b for i in set(prio["table"]) for b in self.lists.items[i]})
            caps[cap] = {
                "priorities": prio,
                "backends": {b: self.backend_entry(b, cap) for b in universe},
            }
        return caps

    def build(self) -> SelectorData:
        caps = self.entries([str(cap) for cap in self.grid["capability"]])
        repair(self, caps)
        return {
            "dims": [(dim, [query_value(v) for v in values]) for dim, values in self.grid.items()],
            "defaults": [
                query_value(self.grid[d][i])
                for d, i in zip(dims_of(self.grid), default_point(self.grid), strict=True)
            ],
            "reasons": self.reasons.items,
            "lists": self.lists.items,
            "caps": caps,
        }


def factor_reasons(grid: Grid, reasons_at: Callable[[Sequence[int]], list[int]]) -> BackendEntry:
    """A backend's reasons over the grid, factored: those of a baseline it accepts (or
    with fewest reasons), what each setting changes on its own, and the pairs of
    settings whose joint answer is not the union of their own (``reasons_at``: the
    interned reasons at a point)."""
    dims = dims_of(grid)
    base = default_point(grid)
    best = reasons_at(base)
    for _ in range(2):  # a baseline the backend accepts, or with fewest reasons
        for dim in SEARCH_ORDER + tuple(d for d in dims if d not in SEARCH_ORDER):
            d = dims.index(dim)
            for i in range(len(grid[dim])):
                if i != base[d] and len(best) > 0:
                    found = reasons_at(with_value(base, d, i))
                    if len(found) < len(best):
                        base, best = with_value(base, d, i), found
    singles: dict[int, list[list[int]]] = {}
    for d, dim in enumerate(dims):
        row = [
            best if i == base[d] else reasons_at(with_value(base, d, i))
            for i in range(len(grid[dim]))
        ]
        if any(r != best for r in row):
            singles[d] = row
    observed: list[Sequence[int]] = [best, *(r for row in singles.values() for r in row)]
    actual: dict[tuple[int, int, int, int], list[int]] = {}
    for d1, d2 in itertools.combinations(sorted(singles), 2):
        unions: dict[tuple[tuple[int, ...], tuple[int, ...]], bool] = {}
        for i1, i2 in itertools.product(range(len(grid[dims[d1]])), range(len(grid[dims[d2]]))):
            if i1 == base[d1] or i2 == base[d2]:
                continue
            s1, s2 = singles[d1][i1], singles[d2][i2]
            # A setting rejected on its own: one pair per kind of answer of
            # the two settings is asked, the others only if it was not the
            # union (two settings each accepted alone are always asked).
            kind = (tuple(s1), tuple(s2))
            loud = bool(set(s1) - set(best)) or bool(set(s2) - set(best))
            if loud and unions.get(kind, False):
                continue
            found = reasons_at(with_value(with_value(base, d1, i1), d2, i2))
            actual[(d1, d2, i1, i2)] = found
            observed.append(found)
            if loud and kind not in unions:
                unions[kind] = set(found) == set(s1) | set(s2)
    order = consistent_order(observed)
    joint: dict[str, dict[str, list[list[int]]]] = {}
    for (d1, d2, i1, i2), found in actual.items():
        union = combine(best, (singles[d1][i1], singles[d2][i2]), order)
        if found != union:
            joint.setdefault(f"{d1},{d2}", {})[f"{i1},{i2}"] = delta(found, union)
    return {
        "base": base,
        "reasons": best,
        "single": {str(d): row for d, row in singles.items()},
        "joint": joint,
        "order": order,
    }


__all__ = ["TableBuilder", "factor_reasons"]
