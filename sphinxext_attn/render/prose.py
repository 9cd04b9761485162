"""Fixed texts shared by every renderer, worded as vLLM's generator words them."""

from __future__ import annotations

from sphinxext_attn.model.columns import LEGEND
from sphinxext_attn.model.records import MLA_COLUMNS, Analysis

#: Legend rows the seed's page shows: the columns of its MLA table.
SEED_LEGEND_COLUMNS: tuple[str, ...] = tuple(c for c in MLA_COLUMNS if c != "Backend")
SYMBOLS = "✅ = Supported, ❌ = Not supported"
#: How evaluated cells (the runtime profile) write sets of values.
NOTATION: tuple[tuple[str, str], ...] = (
    (
        "?",
        "Not evaluated statically (a call into torch, the environment, a loop); "
        "the reason shows on hover and in the JSON's `unknown`",
    ),
    ("%N", "Multiples of N (`%16`: block sizes 16, 32, 48, ...)"),
    ("≥N, ≤N", "Every head size from N up, or up to N (`≥32`: 32, 33, 34, ...)"),
    ("a-b", "Every value from a to b (with `%N`: every multiple of N in the range)"),
    ("%8, ≤512", "Conditions in one cell hold together: every multiple of 8 up to 512"),
    ("x or y", "Either: `%8, ≤512 or 576` is every multiple of 8 up to 512, and 576"),
    ("≥8.0", "This compute capability and every later one vLLM tells apart"),
    ("9.x", "Every GPU of that major version (9.0; 10.0 and 10.3; ...)"),
    (
        "64 (9.x)",
        "Block sizes the class picks by GPU: this size on these GPUs only "
        "(the JSON's `block_sizes_by_capability`)",
    ),
    ("Any", "Every value: any head size or block size, every compute capability"),
    ("None", "No value is accepted"),
    (
        "§",
        "See the note under the table. KV Dtypes lists what the class declares "
        "(`supported_kv_cache_dtypes`); vLLM's selection asks `supports_kv_cache_dtype()`, "
        "and the note says where that accepts other dtypes. Head Sizes, Block Sizes and "
        "Compute Cap. show what vLLM's full check (`validate_configuration`) accepts; the "
        "note names the check that refuses a value the column's own method admits",
    ),
)

PRIORITY_INTRO = (
    "When no backend is explicitly selected, vLLM chooses the first\n"
    "compatible backend from these priority-ordered lists."
)
PRIORITY_ONE = "Priority is **1 = highest** (tried first)."
PRIORITY_NOTE = (
    "ROCm and CPU platforms have their own selection logic. "
    "See the platform-specific documentation for details."
)
CATEGORY_TITLES = {
    "standard": "Standard Attention (MHA, MQA, GQA)",
    "mla": "MLA Attention (DeepSeek-style)",
}

PREFILL_INTRO = "The prefill backend is selected at runtime based on hardware and\nconfiguration."
PREFILL_FOOTNOTE = (
    "TRT-LLM Ragged is the default on Blackwell (SM100).\n"
    "On other GPUs, FlashAttention is used as the default."
)


FAMILY_TABLES = {
    "dsv4": (
        "DeepSeek V4 Decode Backends",
        "DeepSeek V4 sparse MLA has decode backends of its own, selected with\n"
        "`--attention-backend=<BACKEND>`; they are not in the priority lists above.",
    ),
    "minimax": (
        "MiniMax M3 Sparse Attention Backends",
        "MiniMax M3 sparse layers use these backends directly; they are not in\n"
        "the automatic priority lists above.",
    ),
}


def prefill_footnote(analysis: Analysis) -> str | None:
    """The ``‡`` note under the prefill table: the seed's words for selector-era rows."""
    first = next((p for p in analysis.mla_prefill if p.marker), None)
    if first is None:
        return None
    if not first.literal:
        return PREFILL_FOOTNOTE
    return (
        f"On Blackwell (SM 10.x) automatic selection tries `{first.name}` first, then the\n"
        "others in the order shown; on other GPUs it uses the platform's default list."
    )


def legend_rows(columns: tuple[str, ...] = SEED_LEGEND_COLUMNS) -> list[tuple[str, str]]:
    """Legend rows for the given columns, in legend order."""
    return [(c, d) for c, d in LEGEND if c in columns]
