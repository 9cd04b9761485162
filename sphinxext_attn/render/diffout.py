"""A release diff as markdown (for review comments and release notes) or JSON (for tools)."""

from __future__ import annotations

import json

from sphinxext_attn.model.diff import (
    ADDED,
    FEATURES,
    PREFILL,
    PRIORITY,
    REMOVED,
    Change,
    backends_added,
    backends_removed,
    diff,
    label,
)
from sphinxext_attn.model.json_value import JsonObject, as_json
from sphinxext_attn.model.records import Analysis

FEATURE_HEADER = ("Backend", "Version", "Column", "From", "To")
PRIORITY_HEADER = ("List", "From", "To")
PREFILL_HEADER = ("Backend", "Column", "From", "To")
SCHEMA = 1


def change_row(change: Change) -> tuple[str, str, str]:
    """(column, from, to), a row added or removed spelled out as such."""
    if change.kind == ADDED:
        return change.column or "(row)", change.old or "—", change.new or "added"
    if change.kind == REMOVED:
        return change.column or "(row)", change.old or "present", change.new or "removed"
    return change.column, change.old, change.new


def feature_rows(changes: list[Change]) -> list[tuple[str, ...]]:
    return [(c.backend, c.version, *change_row(c)) for c in changes if c.section == FEATURES]


def priority_rows(changes: list[Change]) -> list[tuple[str, ...]]:
    return [(c.backend, *change_row(c)[1:]) for c in changes if c.section == PRIORITY]


def prefill_rows(changes: list[Change]) -> list[tuple[str, ...]]:
    return [(c.backend, *change_row(c)) for c in changes if c.section == PREFILL]


def _md_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    def line(cells: tuple[str, ...]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return [line(header), "|" + "|".join("-" * (len(h) + 2) for h in header) + "|"] + [
        line(r) for r in rows
    ]


def render_diff_markdown(old: Analysis, new: Analysis) -> str:
    changes = diff(old, new)
    lines = [f"# Attention backend changes: {label(old)} → {label(new)}", ""]
    for title, names in (
        ("Backends added", backends_added(old, new)),
        ("Backends removed", backends_removed(old, new)),
    ):
        lines += [f"## {title}", ""]
        lines += [f"- `{n}`" for n in names] or ["None."]
        lines.append("")
    for title, header, rows in (
        ("Feature changes", FEATURE_HEADER, feature_rows(changes)),
        ("Priority changes", PRIORITY_HEADER, priority_rows(changes)),
        ("MLA prefill changes", PREFILL_HEADER, prefill_rows(changes)),
    ):
        lines += [f"## {title}", ""]
        lines += _md_table(header, rows) if rows else ["None."]
        lines.append("")
    return "\n".join(lines)


def diff_data(old: Analysis, new: Analysis) -> JsonObject:
    return {
        "schema": SCHEMA,
        "from": label(old),
        "to": label(new),
        "added": backends_added(old, new),
        "removed": backends_removed(old, new),
        "changes": [as_json(c) for c in diff(old, new)],
    }


def render_diff_json(old: Analysis, new: Analysis) -> str:
    return json.dumps(diff_data(old, new), indent=2, ensure_ascii=False) + "\n"
