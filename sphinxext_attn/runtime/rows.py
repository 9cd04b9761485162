"""Put a class's answers into its page row (the runtime profile's cells).

Needs no evaluator: a run answered from kept results merges them as a first
run does (see :mod:`.merge`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sphinxext_attn.model.columns import FLAGS
from sphinxext_attn.model.records import BackendFeatures, CudagraphAnswer, Location
from sphinxext_attn.runtime.cell_text import capability_text, head_size_text, per_gpu_labels
from sphinxext_attn.runtime.class_answers import ClassAnswers
from sphinxext_attn.source.registry import RegistryEntry
from sphinxext_attn.vocab.names import ATTN_TYPE_NAMES, CAPABILITIES, SCORED_CAPABILITIES

#: Cells of the variant rows that depend on the FlashAttention version or the
#: TRTLLM kernels present: kept as the variant rule reads them.
VARIANT_CELLS = {
    "FLASH_ATTN": {"Sink", "KV Dtypes", "Head Sizes", "Compute Cap."},
    "FLASHINFER": {"Sink", "Block Sizes", "KV Dtypes", "Compute Cap."},
}


def apply_facts(row: BackendFeatures, facts: ClassAnswers, keep: set[str]) -> BackendFeatures:
    """The row with its evaluated cells (``keep``: columns the variant rule decides)."""
    changes: dict[str, Any] = {}
    cells = facts.cells
    unknown = {k: v for k, v in facts.unknown.items() if k not in keep}
    supports: dict[str, Any] = {}
    #: what vLLM's full check accepts (the cells shown; see runtime.accepts)
    accepts: dict[str, Any] = {}
    if "Dtypes" not in keep and cells.get("Dtypes") is not None:
        changes["dtypes"] = tuple(cells["Dtypes"])
    if "KV Dtypes" not in keep and cells.get("KV Dtypes") is not None:
        changes["kv_cache_dtypes"] = tuple(cells["KV Dtypes"])
    blocks = cells.get("Block Sizes")
    if "Block Sizes" not in keep and blocks is not None:
        labels = [b for b in blocks if b != "%1"] if "%1" not in blocks else []
        by_gpu = facts.blocks_by_gpu
        if by_gpu and labels:
            labels = per_gpu_labels(by_gpu, labels)
            supports["block_sizes_by_capability"] = {
                f"{a}.{b}": list(v)
                for (a, b), v in by_gpu.items()
                if (a, b) in SCORED_CAPABILITIES
            }
        supports["block_sizes"] = "any" if "%1" in blocks or not blocks else list(blocks)
        accepts.update(supports)
        kept = facts.accepts.get("Block Sizes")
        if kept is not None:  # sizes the full check refuses everywhere left out
            labels = [b for b in labels if b.split(" ")[0] in kept]
            accepts["block_sizes"] = list(kept)
            if "block_sizes_by_capability" in supports:
                accepts["block_sizes_by_capability"] = {
                    gpu: [b for b in sizes if b in kept]
                    for gpu, sizes in supports["block_sizes_by_capability"].items()
                }
        changes["block_sizes"] = tuple(labels)
    if "Head Sizes" not in keep and cells.get("Head Sizes") is not None:
        shown = facts.accepts.get("Head Sizes", cells["Head Sizes"])
        changes["head_sizes"] = head_size_text(shown)
        supports["head_sizes"] = cells["Head Sizes"]
        accepts["head_sizes"] = shown
    caps = cells.get("Compute Cap.")
    if "Compute Cap." not in keep and caps is not None and row.compute_capability != "N/A":
        told = facts.capability_points or CAPABILITIES
        shown = facts.accepts.get("Compute Cap.", caps)
        changes["compute_capability"] = capability_text(shown, told)
        supports["compute_capabilities"] = _capabilities(caps, told)
        accepts["compute_capabilities"] = _capabilities(shown, told)
    if cells.get("Attention Types") is not None:
        names = [ATTN_TYPE_NAMES.get(n, n) for n in cells["Attention Types"]]
        every = set(ATTN_TYPE_NAMES.values())
        changes["attn_types"] = (
            "All" if set(names) >= every else ", ".join(sorted(names)) or "None"
        )
    for flag in FLAGS:
        if flag.title not in keep and cells.get(flag.title) is not None:
            changes[flag.field] = bool(cells[flag.title])
    sources = dict(row.sources)
    sources.update((c, loc) for c, loc in facts.sources.items() if c not in keep)
    return replace(
        row,
        **changes,
        unknown=unknown,
        supports=supports,
        accepts=_accepts(accepts, facts, keep),
        extras=dict(facts.extras),
        cudagraph=CudagraphAnswer(**facts.cudagraph),
        sources=sources,
        assumptions={c: tuple(v) for c, v in facts.assumptions.items() if c not in keep},
        notes={c: v for c, v in facts.notes.items() if c not in keep},
    )


def _capabilities(caps: Any, told: Any) -> Any:
    """``"any"`` or the scored capabilities of ``caps`` (the JSON's form)."""
    if set(caps) == set(told):
        return "any"
    return [f"{a}.{b}" for a, b in caps if (a, b) in SCORED_CAPABILITIES]


def _accepts(accepts: dict[str, Any], facts: ClassAnswers, keep: set[str]) -> dict[str, Any]:
    """The JSON's ``accepts``: ``supports``' shape, and ``unknown`` where the full
    check was not evaluated."""
    unknown = {c: v for c, v in facts.accepts_unknown.items() if c not in keep}
    return {**accepts, "unknown": unknown} if unknown else accepts


def new_row(
    entry: RegistryEntry, where: Location, facts: ClassAnswers, family: str
) -> BackendFeatures:
    """A row for a backend the page analysis has none for (a composite)."""
    row = BackendFeatures(
        name=entry.name,
        class_path=entry.class_path,
        is_mla=bool(facts.mla),
        family=family,
        sources={"Backend": where},
    )
    return apply_facts(row, facts, set())


def keep_for(row: BackendFeatures) -> set[str]:
    return VARIANT_CELLS.get(row.name, set()) if row.version else set()
