"""The set of head sizes a JSON ``supports.head_sizes`` value stands for, as
exactcmp reads it: ``"any"``, or ints and ``{"min", "max", "multiple_of"}`` rules
whose union is the set. Shared by the evaluator's and the real trees' tests."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def expand(items: Any, sizes: Iterable[int]) -> set[int] | None:
    """The sizes of ``sizes`` the items accept; None when ``items`` is no item list."""
    universe = set(sizes)
    if items == "any":
        return universe
    if not isinstance(items, list | tuple):
        return None
    out: set[int] = set()
    for item in items:
        if isinstance(item, int):
            out.add(item)
            continue
        lo, hi, step = item["min"], item["max"], item["multiple_of"]
        out |= {
            h
            for h in universe
            if (lo is None or h >= lo) and (hi is None or h <= hi) and (not step or h % step == 0)
        }
    return out & universe
