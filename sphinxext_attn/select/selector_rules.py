"""The selector's table on a platform without a priority list (XPU, CPU).

Such a platform decides in ``get_attn_backend_cls``, an ordered ``if``/``else``
(:mod:`.platform_rules`): there is no list to walk and no reason per backend,
only an outcome, the backend it returns or what it raises. The outcome is
tabulated over the settings it depends on, found as the priority lists' are
(each setting varied from every point of the kept ones until none is added);
the rest of the grid does not change it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sphinxext_attn.pyeval import Unknown
from sphinxext_attn.select.decision import Selector
from sphinxext_attn.select.selector_grid import (
    DIMS,
    GRID,
    Interner,
    config_at,
    default_point,
    factor,
    list_at,
    query_value,
)

#: the kind of a rule platform's table (``"kind"`` in the shipped data)
RULES = "rules"
#: the most points an outcome table may have: beyond it the outcome depends on too
#: many settings together (XPU's MLA check reads nearly all) to tabulate cheaply
MAX_POINTS = 4096


class RuleTableBuilder:
    """The outcome table of one rule platform (the interface of ``TableBuilder``
    that :mod:`.selector_facts` uses: ``entry``, ``facts``, ``lists``, ``build``)."""

    def __init__(self, selector: Selector, grid: dict[str, tuple[Any, ...]] | None = None):
        self.selector = selector
        self.grid = grid or GRID
        self.reasons = Interner()  # none: a rule platform gives no reasons
        #: outcomes, ``["selected", NAME]`` or ``["raised", MESSAGE]``
        self.lists = Interner()
        self.facts: dict[tuple[str, str], dict[str, str]] = {}
        self.probes = 0

    def outcome(self, cap: str, point: Sequence[int]) -> int:
        self.probes += 1
        decision = self.selector.decide_here(config_at(self.grid, cap, point))
        read = self.facts.setdefault((cap, ""), {})
        read.update(a.split("=", 1) for a in decision.assumptions if "=" in a)  # type: ignore[misc]
        if decision.selected:
            return self.lists(("selected", decision.selected))
        return self.lists(("raised", decision.raised or decision.error or "no valid backend"))

    def answer(self, cap: str, key: str, point: Sequence[int]) -> Any:
        return self.outcome(cap, point)

    def entry(self, cap: str, key: str = "") -> dict[str, Any]:
        seen: dict[tuple[int, ...], int] = {}

        def ask(point: list[int]) -> int:
            if tuple(point) not in seen:
                seen[tuple(point)] = self.outcome(cap, point)
            return seen[tuple(point)]

        def refuse_too_many(keys: list[int]) -> None:
            if _size(self.grid, keys) > MAX_POINTS:
                names = ", ".join(DIMS[k] for k in keys)
                raise Unknown(
                    f"the decision depends on too many settings together "
                    f"({names}) for the page's table"
                )

        return factor(self.grid, range(len(DIMS)), ask, refuse_too_many)

    def build(self) -> dict[str, Any]:
        caps = {
            cap: {"priorities": self.entry(cap), "backends": {}} for cap in self.grid["capability"]
        }
        return {
            "kind": RULES,
            "dims": [[dim, [query_value(v) for v in self.grid[dim]]] for dim in GRID],
            "defaults": [
                query_value(self.grid[d][i])
                for d, i in zip(DIMS, default_point(self.grid), strict=True)
            ],
            "reasons": self.reasons.items,
            "lists": self.lists.items,
            "caps": caps,
        }


def _size(grid: dict[str, tuple[Any, ...]], keys: Sequence[int]) -> int:
    out = 1
    for d in keys:
        out *= len(grid[DIMS[d]])
    return out


def rule_outcome(table: dict[str, Any], cap: str, point: Sequence[int]) -> list[str]:
    """``["selected", NAME]`` or ``["raised", MESSAGE]`` at ``point``."""
    sizes = [len(values) for dim, values in table["dims"] if dim != "capability"]
    return list(table["lists"][list_at(table["caps"][cap]["priorities"], sizes, point)])


__all__ = ["RULES", "RuleTableBuilder", "rule_outcome"]
