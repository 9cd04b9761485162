"""Settings that act only together: triples (and pairs the first pass skipped)
found by checking the selector's factored table while it is built.

The table (:mod:`.selector_table`) recombines each backend's reasons from the
baseline, each setting on its own and the pairs of settings that interact.
Some checks depend on three settings at once: FlashAttention on 10.x falls
back to FA2 for head size 256 only with a 32-token block, and then refuses an
fp8 KV cache. :func:`repair` compares the recombined reasons with
the backend's own on a sample of configurations and, where they differ, adds
corrections for the two or three settings that cause it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Protocol

from sphinxext_attn.model.selector_shape import BackendEntry, CapEntry, Corrections
from sphinxext_attn.selector.grid import (
    Grid,
    Interner,
    consistent_order,
    dims_of,
    list_at,
    size_of,
)
from sphinxext_attn.selector.predict import backend_reasons, sample_configs

#: the points checked per capability and backend, each with its real reasons
Checked = dict[tuple[str, str], list[tuple[list[int], set[int]]]]
#: how an entry's reasons are recombined at a point (:func:`.backend_reasons`)
Recombine = Callable[[BackendEntry, Sequence[int]], list[int]]


class Asks(Protocol):
    """What the repair asks of a table's builder (a CUDA-like or a rule platform's)."""

    @property
    def grid(self) -> Grid: ...

    def reasons_at(self, backend: str, cap: str, point: Sequence[int]) -> list[int]: ...


class AsksLists(Asks, Protocol):
    """A builder of a table with priority lists (:func:`repair`)."""

    @property
    def lists(self) -> Interner[list[str]]: ...


#: Configurations the recombination is checked on while the table is built, and
#: their seed (the agreement reported afterwards uses another sample).
REPAIR_SAMPLE = 500
REPAIR_SEED = 2


def delta(found: Sequence[int], predicted: Sequence[int]) -> list[list[int]]:
    """``[added, removed]``: what turns the recombined reasons into the real ones."""
    return [[r for r in found if r not in predicted], [r for r in predicted if r not in found]]


def repair(builder: AsksLists, caps: dict[str, CapEntry], count: int | None = None) -> None:
    """Check the recombined reasons against each backend's own on a sample of
    configurations (not the one :func:`build_selector_table` measures with).
    Where they differ, the two or three settings that cause it on their own
    (the others at the backend's baseline) get corrections over all their values:
    FlashAttention on 10.x, say, resolves to FA2 only for head size 256 with a
    32-token block, where an fp8 KV cache is then refused."""
    sizes = [len(builder.grid[dim]) for dim in dims_of(builder.grid)]
    checked: Checked = {}
    count = REPAIR_SAMPLE if count is None else count
    for config in sample_configs(builder.grid, count, seed=REPAIR_SEED):
        cap = caps.get(config.capability)
        if cap is None:  # (a part of the table, asked in another process)
            continue
        point = [builder.grid[dim].index(getattr(config, dim)) for dim in dims_of(builder.grid)]
        for name in builder.lists.items[list_at(cap["priorities"], sizes, point)]:
            actual = _check(
                builder, checked, cap["backends"][name], name, config.capability, point
            )
            if not actual:
                break  # chosen: vLLM tries no further


def repair_entries(
    builder: Asks, caps: dict[str, CapEntry], names: Sequence[str], count: int | None = None
) -> None:
    """:func:`repair` for entries asked at every configuration (a rule platform's
    checks, :mod:`.selector_checks`): each one's recombined reasons against its own."""
    checked: Checked = {}
    count = REPAIR_SAMPLE if count is None else count
    for config in sample_configs(builder.grid, count, seed=REPAIR_SEED):
        point = [builder.grid[dim].index(getattr(config, dim)) for dim in dims_of(builder.grid)]
        for name in names:
            entry = caps[config.capability]["backends"][name]
            _check(builder, checked, entry, name, config.capability, point)


def _check(
    builder: Asks,
    checked: Checked,
    entry: BackendEntry,
    name: str,
    capability: str,
    point: list[int],
) -> list[int]:
    """Compare one entry's recombined reasons at ``point`` with its real ones,
    correct it where they differ, and keep the point as checked; the real reasons."""
    actual = builder.reasons_at(name, capability, point)
    seen = checked.setdefault((capability, name), [])
    if set(actual) != set(backend_reasons(entry, point)):
        checks = [*seen, (point, set(actual))]
        _correct(builder, entry, name, capability, checks, backend_reasons)
    seen.append((point, set(actual)))
    return actual


def _correct(
    builder: Asks,
    entry: BackendEntry,
    name: str,
    cap: str,
    checks: list[tuple[list[int], set[int]]],
    reasons: Recombine,
) -> None:
    """Add corrections for the pairs and triples of the settings of the last point
    checked that are wrong on their own (until that point comes out right), each
    kept only if with it more of the ``checks`` (points and their real reasons)
    come out right than without."""
    base = entry["base"]
    point, actual = checks[-1]
    differing = [d for d in range(len(dims_of(builder.grid))) if point[d] != base[d]]

    def right() -> int:
        return sum(set(reasons(entry, p)) == a for p, a in checks)

    before = right()
    for size in (2, 3):
        for dims in itertools.combinations(differing, size):
            at = list(base)
            for d in dims:
                at[d] = point[d]
            if set(builder.reasons_at(name, cap, at)) == set(reasons(entry, at)):
                continue
            saved = dict(entry["joint"]), entry["order"]
            _add_joint(builder, entry, name, cap, dims, reasons)
            after = right()
            if after <= before:
                entry["joint"], entry["order"] = saved  # it breaks as much as it mends
                continue
            before = after
            if set(reasons(entry, point)) == actual:
                return


def _add_joint(
    builder: Asks,
    entry: BackendEntry,
    name: str,
    cap: str,
    dims: Sequence[int],
    reasons: Recombine,
) -> None:
    """Corrections for ``dims`` over all their values, on top of the rest."""
    key = ",".join(str(d) for d in dims)
    entry["joint"][key] = {}  # recombined without its own (pairs: from scratch)
    table: Corrections = {}
    observed: list[Sequence[int]] = [entry["order"]]
    for combo in itertools.product(*(range(size_of(builder.grid, d)) for d in dims)):
        at = list(entry["base"])
        for d, i in zip(dims, combo, strict=True):
            at[d] = i
        found = builder.reasons_at(name, cap, at)
        observed.append(found)
        predicted = reasons(entry, at)
        if set(found) != set(predicted):
            table[",".join(str(i) for i in combo)] = delta(found, predicted)
    entry["order"] = consistent_order(observed)
    if table:
        entry["joint"][key] = table
    else:
        del entry["joint"][key]
