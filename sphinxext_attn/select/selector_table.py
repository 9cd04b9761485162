"""The interactive selector's table: vLLM's decision over a grid, factored to stay small.

The whole grid (seven capabilities, three dtypes, five KV cache dtypes, eight
head sizes, ...) has millions of configurations: too many to evaluate or to
ship. The decision is factored the way vLLM's code is written:

* the priority list depends only on the arguments of ``_get_backend_priorities``;
  of those, only the ones that change the list for a capability are kept
  (found by varying each from every point of the kept ones until none is
  added), and the list is tabulated over them;
* a backend's rejection reasons are, for one capability, the reasons of a
  baseline it accepts (where there is one) changed by each dimension on its
  own (``validate_configuration`` checks them one by one); where two
  dimensions together give something else than their union, the pair is
  kept as an exception, and so are the triples a check of the recombination
  on sampled configurations finds (:func:`.selector_repair.repair`).

:func:`~sphinxext_attn.select.selector_predict.predict` recombines them
(``attention_backends_selector.js`` does the same in the browser) and
:func:`~sphinxext_attn.select.selector_predict.agreement` measures the factorisation against full
:meth:`Selector.decide` answers.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sphinxext_attn.model.environment import REFERENCE, Environment
from sphinxext_attn.pyeval import Interpreter, Raised, Unknown
from sphinxext_attn.pyeval.machine import Machine
from sphinxext_attn.select.decision import Selector
from sphinxext_attn.select.selector_grid import (
    DIMS,
    GRID,
    SEARCH_ORDER,
    Interner,
    combine,
    config_at,
    consistent_order,
    default_point,
    query_value,
    with_value,
)
from sphinxext_attn.select.selector_predict import agreement, sample_configs
from sphinxext_attn.select.selector_probe import Prober
from sphinxext_attn.select.selector_repair import delta, repair
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.vocab.paths import CUDA_PLATFORM_FILE, module_file


class TableBuilder:
    """Builds the factored table of one tree over a grid (see the module docstring)."""

    def __init__(self, selector: Selector, grid: dict[str, tuple[Any, ...]] | None = None):
        self.selector = selector
        self.prober = Prober(selector)
        self.grid = grid or GRID
        self.reasons = Interner()
        self.lists = Interner()
        self.probes = 0
        #: the machine facts (name -> value) each entry's questions read: key
        #: (capability, "") for the priority table, (capability, backend) for a backend
        self.facts: dict[tuple[str, str], dict[str, str]] = {}
        #: per entry, the points whose question read a machine fact, with the facts
        self.point_facts: dict[tuple[str, str], dict[tuple[int, ...], dict[str, str]]] = {}

    # -- priority lists ----------------------------------------------------------

    def _priorities(self, cap: str, point: Sequence[int]) -> int:
        self.prober.read = {}
        found = self.prober.priorities(config_at(self.grid, cap, point))
        self._note((cap, ""), point)
        return self.lists(found)

    def _note(self, key: tuple[str, str], point: Sequence[int]) -> None:
        read = self.prober.read
        self.facts.setdefault(key, {}).update(read)
        if read:
            self.point_facts.setdefault(key, {})[tuple(point)] = dict(read)

    def answer(self, cap: str, key: str, point: Sequence[int]) -> Any:
        """One question of an entry: the list (``key`` "") or a backend's reasons."""
        return self._priorities(cap, point) if not key else self.reasons_at(key, cap, point)

    def priority_table(self, cap: str) -> dict[str, Any]:
        params = [DIMS.index(p) for p in self.prober.priority_params if p in DIMS]
        base = default_point(self.grid)
        seen: dict[tuple[int, ...], int] = {}

        def ask(point: list[int]) -> int:
            key = tuple(point[d] for d in params)
            if key not in seen:
                seen[key] = self._priorities(cap, point)
            return seen[key]

        keys: list[int] = []
        grown = True
        while grown:
            grown = False
            for point in self._points(base, keys):
                ref = ask(point)
                for d in (p for p in params if p not in keys):
                    if any(
                        ask(with_value(point, d, i)) != ref
                        for i in range(len(self.grid[DIMS[d]]))
                        if i != point[d]
                    ):
                        keys = sorted([*keys, d])
                        grown = True
                        break
                if grown:
                    break
        table = [ask(point) for point in self._points(base, keys)]
        return {"keys": keys, "table": table}

    def _points(self, base: list[int], dims: Sequence[int]) -> Iterable[list[int]]:
        """Every point varying ``dims`` (mixed radix, the last varying fastest)."""
        for combo in itertools.product(*(range(len(self.grid[DIMS[d]])) for d in dims)):
            point = list(base)
            for d, i in zip(dims, combo, strict=True):
                point[d] = i
            yield point

    # -- rejection reasons -------------------------------------------------------

    def reasons_at(self, backend: str, cap: str, point: Sequence[int]) -> list[int]:
        self.probes += 1
        self.prober.read = {}
        found = self.prober.reasons(backend, config_at(self.grid, cap, point))
        self._note((cap, backend), point)
        return [self.reasons(r) for r in found]

    def backend_entry(self, backend: str, cap: str) -> dict[str, Any]:
        base = default_point(self.grid)
        best = self.reasons_at(backend, cap, base)
        for _ in range(2):  # a baseline the backend accepts, or with fewest reasons
            for dim in SEARCH_ORDER:
                d = DIMS.index(dim)
                for i in range(len(self.grid[dim])):
                    if i != base[d] and len(best) > 0:
                        found = self.reasons_at(backend, cap, with_value(base, d, i))
                        if len(found) < len(best):
                            base, best = with_value(base, d, i), found
        singles: dict[int, list[list[int]]] = {}
        for d, dim in enumerate(DIMS):
            row = [
                best if i == base[d] else self.reasons_at(backend, cap, with_value(base, d, i))
                for i in range(len(self.grid[dim]))
            ]
            if any(r != best for r in row):
                singles[d] = row
        observed: list[Sequence[int]] = [best, *(r for row in singles.values() for r in row)]
        actual: dict[tuple[int, int, int, int], list[int]] = {}
        for d1, d2 in itertools.combinations(sorted(singles), 2):
            unions: dict[tuple[tuple[int, ...], tuple[int, ...]], bool] = {}
            for i1, i2 in itertools.product(
                range(len(self.grid[DIMS[d1]])), range(len(self.grid[DIMS[d2]]))
            ):
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
                found = self.reasons_at(backend, cap, with_value(with_value(base, d1, i1), d2, i2))
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

    def entry(self, cap: str, key: str) -> dict[str, Any]:
        """One entry of the table: the priority table (``key`` ""), or a backend's."""
        return self.priority_table(cap) if not key else self.backend_entry(key, cap)

    # -- the whole table ---------------------------------------------------------

    def build(self) -> dict[str, Any]:
        caps: dict[str, Any] = {}
        for cap in self.grid["capability"]:
            prio = self.priority_table(cap)
            universe = sorted({b for i in set(prio["table"]) for b in self.lists.items[i]})
            caps[cap] = {
                "priorities": prio,
                "backends": {b: self.backend_entry(b, cap) for b in universe},
            }
        repair(self, caps)
        return {
            "dims": [[dim, [query_value(v) for v in self.grid[dim]]] for dim in GRID],
            "defaults": [
                query_value(self.grid[d][i])
                for d, i in zip(DIMS, default_point(self.grid), strict=True)
            ],
            "reasons": self.reasons.items,
            "lists": self.lists.items,
            "caps": caps,
        }


@dataclass
class SelectorTable:
    """The table of one tree, how long it took and how well it agrees with decide()."""

    table: dict[str, Any] | None
    seconds: float = 0.0
    #: (decisions equal, selected backend equal, compared) on a random sample
    agreement: tuple[int, int, int] = (0, 0, 0)
    #: why there is no table (the file named), else ""
    error: str = ""
    files: list[str] = field(default_factory=list)
    directories: list[str] = field(default_factory=list)
    #: every platform's (and ROCm GPU's) table, by ``variant_key``; the first is ``table``
    variants: dict[str, Any] = field(default_factory=dict)
    #: the tables that could not be built (``key: why``)
    problems: list[str] = field(default_factory=list)

    def shipped(self) -> dict[str, Any] | None:
        """What the page carries: the one table, or every table and the default's key."""
        if self.table is None or len(self.variants) <= 1:
            return self.table
        return {"variants": self.variants, "default": next(iter(self.variants))}


def build_selector_table(
    root: str,
    sample: int = 200,
    platforms: Sequence[str] = ("cuda",),
    environment: Environment = REFERENCE,
) -> SelectorTable:
    """The factored tables of the tree at ``root`` over :data:`GRID`, one per platform
    (and ROCm GPU) of ``platforms``, each with its environment controls; the first
    is the page's default and is checked against full decisions on a sample."""
    from sphinxext_attn.select.selector_variants import build_variants

    started = time.perf_counter()
    tree = SourceTree(root)
    tables: dict[str, Any] = {}
    problems: list[str] = []
    error = ""
    try:
        with Interpreter(tree).guarded():
            tables, problems = build_variants(tree, platforms, environment)
        first = next(iter(tables.values()), None)
        if first is None or not any(c["priorities"]["table"] for c in first["caps"].values()):
            raise Unknown("no priority list evaluated", CUDA_PLATFORM_FILE)
        table: dict[str, Any] | None = first
    except (Unknown, Raised, KeyError) as exc:
        table = None
        where = getattr(exc, "where", "") or CUDA_PLATFORM_FILE
        if "/" not in where and where.startswith("vllm."):  # a module named, not a file
            where = module_file(where)
        reason = getattr(exc, "reason", None) or str(exc)
        error = f"{where}: {reason}"
    seconds = time.perf_counter() - started
    stats = (0, 0, 0)
    if table is not None and sample:
        own = Environment(
            environment.env,
            environment.options,
            environment.assume,
            table["platform"],
            table["arch"],
        )
        selector = Selector(Interpreter(tree, Machine(own)))
        same, chosen, total, _ = agreement(table, selector, sample_configs(GRID, sample, 1))
        stats = (same, chosen, total)
    return SelectorTable(
        table,
        seconds,
        stats,
        error,
        sorted(set(tree.files)),
        list(tree.directories),
        variants=tables,
        problems=problems,
    )


__all__ = ["SelectorTable", "TableBuilder", "build_selector_table"]
