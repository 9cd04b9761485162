"""What changed between two analysed trees: rows added and removed, every cell changed.

Feature rows are matched by (backend, version) and compared on every column
of :data:`FEATURE_COLUMNS` (plus the table a row sits in), priority lists by
(category, arch), MLA prefill rows by name. Cells are compared as the text
the tables show, so a change here is a change a reader would see.
"""

from __future__ import annotations

from dataclasses import dataclass

from sphinxext_attn.model.columns import FEATURE_COLUMNS
from sphinxext_attn.model.records import (
    PREFILL_COLUMNS,
    Analysis,
    BackendFeatures,
    PrefillBackend,
    PriorityList,
)

FEATURES, PRIORITY, PREFILL = "features", "priority", "prefill"
ADDED, REMOVED, CHANGED = "added", "removed", "changed"
#: the pseudo-column that says which table a feature row is in
TABLE_COLUMN = "Table"
DIFF_COLUMNS: tuple[str, ...] = (
    TABLE_COLUMN,
    *(c for c in FEATURE_COLUMNS if c not in ("Backend", "Version")),
)


@dataclass(frozen=True)
class Change:
    """One difference. ``backend`` is the backend name, or ``category/arch`` of a
    priority list; ``column`` is empty for a row added or removed."""

    section: str
    kind: str
    backend: str
    version: str = ""
    column: str = ""
    old: str = ""
    new: str = ""


def _feature_cells(row: BackendFeatures) -> dict[str, str]:
    cells = {c: row.cell(c) for c in DIFF_COLUMNS if c != TABLE_COLUMN}
    cells[TABLE_COLUMN] = row.table
    return cells


def _prefill_cells(row: PrefillBackend) -> dict[str, str]:
    return {c: row.cell(c) for c in PREFILL_COLUMNS if c != "Backend"}


def _rows(
    section: str,
    old: dict[tuple[str, str], dict[str, str]],
    new: dict[tuple[str, str], dict[str, str]],
) -> list[Change]:
    out: list[Change] = []
    for key in sorted(old.keys() | new.keys()):
        name, version = key
        if key not in new:
            out.append(Change(section, REMOVED, name, version))
        elif key not in old:
            out.append(Change(section, ADDED, name, version))
        else:
            before, after = old[key], new[key]
            out.extend(
                Change(section, CHANGED, name, version, c, before[c], after[c])
                for c in before
                if before[c] != after[c]
            )
    return out


def _list_key(p: PriorityList) -> str:
    """``standard/sm100``, with the conditions of an evaluated list (an architecture
    can have several lists, one per condition)."""
    key = f"{p.category}/{p.arch}"
    return f"{key} ({p.conditions})" if p.conditions else key


def _priorities(old: list[PriorityList], new: list[PriorityList]) -> list[Change]:
    before = {_list_key(p): ", ".join(p.backends) for p in old}
    after = {_list_key(p): ", ".join(p.backends) for p in new}
    out: list[Change] = []
    for key in [*before, *(k for k in after if k not in before)]:
        was, now = before.get(key, ""), after.get(key, "")
        if was == now:
            continue
        kind = REMOVED if not now else ADDED if not was else CHANGED
        out.append(Change(PRIORITY, kind, key, column="Order", old=was, new=now))
    return out


def diff(old: Analysis, new: Analysis) -> list[Change]:
    """Every difference from ``old`` to ``new``: feature rows, priority lists, prefill rows."""
    changes = _rows(
        FEATURES,
        {(r.name, r.version): _feature_cells(r) for r in old.backends},
        {(r.name, r.version): _feature_cells(r) for r in new.backends},
    )
    changes += _priorities(old.priorities, new.priorities)
    changes += _rows(
        PREFILL,
        {(p.name, ""): _prefill_cells(p) for p in old.mla_prefill},
        {(p.name, ""): _prefill_cells(p) for p in new.mla_prefill},
    )
    return changes


def backends_added(old: Analysis, new: Analysis) -> list[str]:
    """Backend names the new tree has and the old one has not (any of their rows)."""
    return sorted({r.name for r in new.backends} - {r.name for r in old.backends})


def backends_removed(old: Analysis, new: Analysis) -> list[str]:
    return sorted({r.name for r in old.backends} - {r.name for r in new.backends})


def label(analysis: Analysis) -> str:
    """How a tree is named in a diff: its release, else its folder."""
    if analysis.version:
        return analysis.version
    return analysis.root.rstrip("/").rsplit("/", 1)[-1] or analysis.root
