"""The selector's table on a platform without a priority list (XPU, CPU).

Such a platform decides in ``get_attn_backend_cls``, an ordered ``if``/``else``
(:mod:`.platform_rules`): there is no list to walk and no reason per backend,
only an outcome, the backend it returns or what it raises. The outcome is
tabulated over the settings it depends on, found as the priority lists' are
(each setting varied from every point of the kept ones until none is added);
the rest of the grid does not change it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from sphinxext_attn.knowledge.machine import machine_of
from sphinxext_attn.model.selector_shape import (
    BackendEntry,
    CapEntry,
    Entry,
    EntryKey,
    PriorityTable,
    SelectorData,
)
from sphinxext_attn.pyeval import Interpreter, Unknown
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.selector.builder import factor_reasons
from sphinxext_attn.selector.checks import CheckAsker, StandInMachine
from sphinxext_attn.selector.grid import (
    GRID,
    RULES,
    UNKNOWN,
    Grid,
    Interner,
    config_at,
    default_point,
    dims_of,
    factor,
    query_value,
    rule_outcome,
    size_of,
)
from sphinxext_attn.selector.repair import repair_entries

#: the most points an outcome table may have: beyond it the outcome depends on too
#: many settings together to tabulate cheaply (a backend's check is a setting of its
#: own, :mod:`.selector_checks`, so XPU's MLA check no longer reaches it)
MAX_POINTS = 4096


class RuleTableBuilder:
    """The outcome table of one rule platform (the interface of ``TableBuilder``
    that :mod:`.selector_facts` uses: ``entry``, ``answer``, ``facts``, ``lists``,
    ``build``). ``selector`` evaluates on a :class:`.StandInMachine` (every check
    accepting); ``plain`` on the same machine without stand-ins (the checks' reasons)."""

    def __init__(
        self,
        selector: Selector,
        grid: Grid | None = None,
        plain: Selector | None = None,
    ):
        self.selector = selector
        self.grid = grid or GRID
        #: none for the outcomes; the reasons of the checks (:mod:`.selector_checks`)
        self.reasons: Interner[str] = Interner()
        #: outcomes, ``["selected", NAME]``, ``["raised", MESSAGE]`` or ``["unknown", WHY]``
        self.lists: Interner[list[str]] = Interner()
        self.facts: dict[EntryKey, dict[str, str]] = {}
        #: (none: the rules keep no answers per fact read, see :meth:`learn_from`)
        self.point_facts: dict[EntryKey, dict[tuple[int, ...], dict[str, str]]] = {}
        self.probes = 0
        #: the classes whose own check the rules ask, in the order they were found
        self.checks: list[str] = []
        self._stand_ins: dict[tuple[bool, ...], Selector] = {}
        self._plain = plain
        self._asker: CheckAsker | None = None

    def learn_from(self, other: RuleTableBuilder, differing: Collection[str] = ()) -> None:
        """Index the checks as ``other`` does (a table built for another setting;
        its outcomes are asked again: the rules keep no answers per fact read)."""
        self.checks = list(other.checks)

    def _stand_in(self, answers: tuple[bool, ...]) -> Selector:
        found = self._stand_ins.get(answers)
        if found is None:
            if not any(not a for a in answers):
                found = self.selector
            else:
                interp = self.selector.interp
                env = machine_of(interp).environment
                named = dict(zip(self.checks, answers, strict=False))
                machine = StandInMachine(env, named)
                found = Selector(Interpreter(interp.tree, machine))
            self._stand_ins[answers] = found
        return found

    def outcome(self, cap: str, point: Sequence[int]) -> int:
        self.probes += 1
        answers = tuple(i == 0 for i in point[len(dims_of(self.grid)) :])
        selector = self._stand_in(answers)
        decision = selector.decide_here(
            config_at(self.grid, cap, point[: len(dims_of(self.grid))])
        )
        asked = getattr(machine_of(selector.interp), "asked", [])
        self.checks.extend(n for n in asked if n not in self.checks)
        read = self.facts.setdefault((cap, ""), {})
        read.update(a.split("=", 1) for a in decision.assumptions if "=" in a)  # type: ignore[misc]
        if decision.selected:
            return self.lists(["selected", decision.selected])
        if "*" in decision.unknown:  # the rules could not be evaluated here, as select says
            return self.lists([UNKNOWN, decision.unknown["*"]])
        return self.lists(["raised", decision.raised or decision.error or "no valid backend"])

    def reasons_at(self, name: str, cap: str, point: Sequence[int]) -> list[int]:
        """The reasons of the check of class ``name`` at ``point`` (interned)."""
        self.probes += 1
        if self._asker is None:
            if self._plain is None:
                raise Unknown(f"no machine to ask {name}'s check on")
            self._asker = CheckAsker(self._plain)
        found, read = self._asker.reasons(
            name, config_at(self.grid, cap, point[: len(dims_of(self.grid))])
        )
        self.facts.setdefault((cap, name), {}).update(read)
        return [self.reasons(r) for r in found]

    def answer(self, cap: str, key: str, point: Sequence[int]) -> int | list[int]:
        return self.reasons_at(key, cap, point) if key else self.outcome(cap, point)

    def entry(self, cap: str, key: str = "") -> Entry:
        """The outcome table (``key`` ""), or the reasons of the check of class ``key``."""
        return self.check_entry(cap, key) if key else self.outcome_table(cap)

    def check_entry(self, cap: str, name: str) -> BackendEntry:
        """The reasons of the check of class ``name``."""
        return factor_reasons(self.grid, lambda point: self.reasons_at(name, cap, point))

    def outcome_table(self, cap: str) -> PriorityTable:
        """The outcomes over the settings they depend on, the checks among them."""
        #: outcomes asked, by point without the checks that accept at its end (a
        #: check not yet found accepts): the passes share them
        seen: dict[tuple[int, ...], int] = {}
        while True:  # again with each check the rules were found to ask as a setting
            known = len(self.checks)
            found = self._outcome_table(cap, known, seen)
            if len(self.checks) == known:
                return found

    def _outcome_table(
        self, cap: str, known: int, seen: dict[tuple[int, ...], int]
    ) -> PriorityTable:
        """The outcomes over the settings they depend on, the first ``known`` checks
        among them (a check found meanwhile answers "accepts")."""
        size = len(dims_of(self.grid))

        def ask(point: list[int]) -> int:
            key = list(point)
            while len(key) > size and key[-1] == 0:
                key.pop()
            if tuple(key) not in seen:
                seen[tuple(key)] = self.outcome(cap, key)
            return seen[tuple(key)]

        def refuse_too_many(keys: list[int]) -> None:
            if _size(self.grid, keys) > MAX_POINTS:
                names = ", ".join([*dims_of(self.grid), *self.checks][k] for k in keys)
                raise Unknown(
                    f"the decision depends on too many settings together "
                    f"({names}) for the page's table"
                )

        return factor(self.grid, range(size + known), ask, refuse_too_many, known)

    def build(self) -> SelectorData:
        caps: dict[str, CapEntry] = {
            str(cap): {"priorities": self.outcome_table(str(cap)), "backends": {}}
            for cap in self.grid["capability"]
        }
        for cap, data in caps.items():
            data["backends"] = {name: self.check_entry(cap, name) for name in self.checks}
        if self.checks:
            repair_entries(self, caps, self.checks)
        guessed = machine_of(self.selector.interp).guessed
        for selector in self._stand_ins.values():
            guessed |= machine_of(selector.interp).guessed
        table: SelectorData = {
            "kind": RULES,
            "dims": [(dim, [query_value(v) for v in values]) for dim, values in self.grid.items()],
            "defaults": [
                query_value(self.grid[d][i])
                for d, i in zip(dims_of(self.grid), default_point(self.grid), strict=True)
            ],
            "reasons": self.reasons.items,
            "lists": self.lists.items,
            "caps": caps,
        }
        if self.checks:
            table["checks"] = list(self.checks)
        return table


def _size(grid: Grid, keys: Sequence[int]) -> int:
    out = 1
    for d in keys:
        out *= size_of(grid, d)
    return out


__all__ = ["RULES", "RuleTableBuilder", "rule_outcome"]
