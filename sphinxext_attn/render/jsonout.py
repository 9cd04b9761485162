"""Records to JSON: the analysis as data, with a documented, versioned shape.

Shape (``schema`` 2)::

    {"schema": 2, "root": str, "version": str|null,
     "columns": {table: [column]},  # what each feature table shows by default
     "capability_columns": [column],  # further columns ``:columns:`` may ask for
     "priorities": [{"category", "arch", "backends": [str], "source",
                     runtime: "title", "conditions", "capabilities"}],
     "backends": [{"name", "version", "table", "class_path", "dtypes": [str],
                   "kv_cache_dtypes": [str], "block_sizes": [str], "head_sizes": [str],
                   "attn_types", "compute_capability", "is_mla", "supports_sink",
                   "is_sparse", "supports_mm_prefix", "supports_non_causal",
                   "supports_dcp", "sources": {column: "path:line"},
                   runtime profile: "supports", "accepts" (supports' shape: what
                   vLLM's full check accepts, and "unknown" where not found),
                   "unknown", "extras", "assumptions",
                   "cudagraph" (the builder's level, ``UNIFORM_BATCH``, or
                   {"unknown": why} / {"level", "assumptions": {fact: value}}),
                   and "notes" ({column: text}) where a cell has one}],
     "mla_prefill": [{"name", "description", "dtypes", "compute_capability",
                      "enable", "disable", "notes"}],
     "footnotes": [{"marker", "text"}],
     "diagnostics": [{"message", "location", "subtype"}],
     with --platform P (P other than cuda), per platform asked:
     "platforms": [{"platform", "title", "source", "machine", "error",
                    "lists": [{"category", "gpus": [str], "title", "conditions",
                               "backends": [str]}],  # ROCm
                    "rules": [{"when": [str], "outcome", "line"}],  # XPU, CPU
                    "gpus": {backend: "any" | [str]},  # ROCm: the GPUs it accepts
                    "backends": [backend as above, "compute_capability" the
                                 platform's: GPU names, "Any" or "N/A";
                                 "supports.gpus" on ROCm]}]}

Empty ``block_sizes``/``head_sizes`` mean any size. In the runtime profile,
``supports.head_sizes`` is ``"any"`` or a list of ints and rules ``{"min": int|null,
"max": int|null, "multiple_of": int|null}``; the union of its items is exactly the
set of head sizes the class accepts.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from sphinxext_attn.model.columns import FLAGS
from sphinxext_attn.model.json_value import JsonObject, JsonValue, as_json
from sphinxext_attn.model.records import TABLES, Analysis, BackendFeatures, CudagraphAnswer

SCHEMA = 2


def _backend(row: BackendFeatures) -> JsonObject:
    return {
        "name": row.name,
        "version": row.version,
        "table": row.table,
        "class_path": row.class_path,
        "dtypes": list(row.dtypes),
        "kv_cache_dtypes": list(row.kv_cache_dtypes),
        "block_sizes": list(row.block_sizes),
        "head_sizes": list(row.head_sizes),
        "attn_types": row.attn_types,
        "compute_capability": row.compute_capability,
        "is_mla": row.is_mla,
        **{flag.field: getattr(row, flag.field) for flag in FLAGS},
        "sources": {k: str(v) for k, v in sorted(row.sources.items())},
        **({"not_declared": sorted(row.undeclared)} if row.undeclared else {}),
        **({"cudagraph_support": row.cudagraph_support} if row.cudagraph_support else {}),
        **({"cudagraph": cudagraph_json(row.cudagraph)} if row.cudagraph else {}),
        **(
            {
                "supports": dict(row.supports),
                "accepts": dict(row.accepts),
                "unknown": dict(row.unknown),
                "extras": dict(row.extras),
                "assumptions": {
                    column: dict(fact.split("=", 1) for fact in facts)
                    for column, facts in sorted(row.assumptions.items())
                },
                **({"notes": dict(sorted(row.notes.items()))} if row.notes else {}),
            }
            if row.supports or row.unknown
            else {}
        ),
    }


def cudagraph_json(answer: CudagraphAnswer) -> JsonValue:
    """The level's name; an object where it is unknown or rests on machine facts."""
    facts = answer.get("assumptions", ())
    if "level" in answer and not facts:
        return answer["level"]
    out: JsonObject = {k: as_json(v) for k, v in answer.items() if k != "assumptions"}
    if facts:
        out["assumptions"] = dict(fact.split("=", 1) for fact in facts)
    return out


def to_data(analysis: Analysis) -> JsonObject:
    return {
        "schema": SCHEMA,
        "root": analysis.root,
        "version": analysis.version,
        "columns": {t: list(analysis.feature_columns(t)) for t in TABLES if analysis.rows(t)},
        "capability_columns": list(analysis.capability_columns),
        "priorities": [
            {
                "category": p.category,
                "arch": p.arch,
                "backends": list(p.backends),
                "source": str(p.source) if p.source else None,
                **(
                    {"title": p.title, "conditions": p.conditions, "capabilities": p.capabilities}
                    if p.arch_title
                    else {}
                ),
            }
            for p in analysis.priorities
        ],
        "backends": [_backend(r) for t in TABLES for r in analysis.rows(t)],
        "mla_prefill": [
            {
                "name": p.name,
                "description": p.description,
                "dtypes": list(p.dtypes),
                "compute_capability": p.compute_capability,
                "enable": p.enable,
                "disable": p.disable,
                "notes": p.notes,
            }
            for p in analysis.mla_prefill
        ],
        "footnotes": [{"marker": f.marker, "text": f.text} for f in analysis.footnotes],
        "diagnostics": [
            {
                "message": d.message,
                "location": str(d.location) if d.location else None,
                "subtype": d.subtype,
            }
            for d in analysis.diagnostics
        ],
    }


def platform_data(part: Analysis) -> JsonObject:
    """One other platform's section (``part``: its ``platform:features`` analysis)."""
    selection = part.selection
    return {
        "platform": selection.platform,
        "title": selection.title,
        "source": selection.source or None,
        "machine": selection.machine,
        "error": selection.error or None,
        "lists": [
            {
                "category": p.category,
                "gpus": p.arch.split("+"),
                "title": p.title,
                "conditions": p.conditions,
                "backends": list(p.backends),
            }
            for p in selection.lists
        ],
        "rules": [_rule(r.conditions, r.outcome, r.line, r.class_path) for r in selection.rules],
        "gpus": {b: ("any" if g == ["any"] else list(g)) for b, g in selection.gpus.items()},
        "backends": [_backend(r) for t in TABLES for r in part.rows(t)],
    }


def _rule(when: tuple[str, ...], outcome: str, line: int, class_path: str) -> JsonObject:
    found: JsonObject = {"when": list(when), "outcome": outcome, "line": line}
    return found | ({"class_path": class_path} if class_path else {})


def render_json(analysis: Analysis, platforms: Sequence[Analysis] = ()) -> str:
    data = to_data(analysis)
    if platforms:
        data["platforms"] = [platform_data(p) for p in platforms]
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
