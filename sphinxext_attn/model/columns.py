"""The feature tables' columns: one record per column, and every view of them.

What a column is (the row field it shows, the classmethod vLLM asks for it,
what kind of value it holds, its legend, the first release whose own page
shows it, and how its cell is written) is stated here once. The records, both
readers of a tree, the source lines, the legend and every renderer read it.

:data:`COLUMNS` is in the order the cells are read and asked (the evaluator's
caches make a later answer depend on what was read before, so the order is
kept); :data:`FEATURE_COLUMNS` is the page's layout.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sphinxext_attn.model.records import BackendFeatures

# -- kinds: what a column holds, which says how its cell is written -------------------
#: the registry name of the backend
NAME = "name"
#: a text the reader wrote (the variant's version)
TEXT = "text"
#: model dtypes, by the tables' labels (``fp16``)
DTYPES = "dtype list"
#: KV cache dtypes, by vLLM's code names (shown as inline literals)
KV_DTYPES = "kv dtype list"
#: a set of sizes: labels (``%16``, ``≥32``), empty for any size
SIZES = "size set"
#: the attention types accepted, as one text (``All``, ``Decoder``)
ATTN_TYPES = "attention types"
#: the compute capabilities accepted, as one text (``≥8.0``, ``9.x``)
CAPABILITIES = "capabilities"
#: a yes/no capability of the backend class
FLAG = "flag"
#: the CUDA-graph support level the backend's metadata builder declares (by name)
CUDAGRAPH_LEVEL = "cudagraph level"

YES, NO = "✅", "❌"
#: How a cell the evaluator could not answer is shown (the legend explains it).
UNKNOWN_MARK = "?"


@dataclass(frozen=True)
class Column:
    """One column of the feature tables."""

    title: str
    #: the :class:`BackendFeatures` field the cell shows ("": a capability kept in
    #: ``extras`` under its question)
    field: str
    #: the backend classmethod vLLM asks ("": none, read from the registry)
    question: str
    kind: str
    #: the legend's words ("": not in the legend)
    legend: str = ""
    #: the first release whose own page (its generator) shows the column; "" for the
    #: seed's columns and for those no vLLM page shows
    since: str = ""
    #: before the backend class had the question, vLLM asked its impl class this
    #: attribute (and vLLM's generator still reads it for the cell)
    impl_attribute: str = ""
    #: shown on vLLM's page; False: a capability only a ``:columns:`` option asks for
    on_page: bool = True

    @property
    def literal(self) -> bool:
        """Cells are lists of code names, shown as inline literals."""
        return self.kind == KV_DTYPES

    def text(self, row: BackendFeatures) -> str:
        """The plain cell text of ``row``, as the seed writes it (no markdown quoting)."""
        if not self.field:
            value = row.extras.get(self.question)
            return UNKNOWN_MARK if value is None else (YES if value else NO)
        value = getattr(row, self.field)
        if self.kind == FLAG:
            return YES if value else NO
        if self.kind == CUDAGRAPH_LEVEL:
            return str(value.get("level") or UNKNOWN_MARK)
        if self.kind in (DTYPES, KV_DTYPES):
            return ", ".join(value)
        if self.kind == SIZES:
            return ", ".join(value) or "Any"
        return str(value)


def _flag(title: str, question: str, legend: str, since: str = "", impl: str = "") -> Column:
    return Column(title, question, question, FLAG, legend, since, impl)


def _extra(title: str, question: str, legend: str) -> Column:
    return Column(title, "", question, FLAG, legend, on_page=False)


COLUMNS: tuple[Column, ...] = (
    Column("Backend", "name", "", NAME),
    Column("Version", "version", "", TEXT),
    Column(
        "Dtypes",
        "dtypes",
        "supports_dtype",
        DTYPES,
        "Supported model data types (fp16, bf16, fp32)",
    ),
    Column(
        "KV Dtypes",
        "kv_cache_dtypes",
        "supports_kv_cache_dtype",
        KV_DTYPES,
        "Supported KV cache data types (`auto`, `fp8`, `fp8_e4m3`, etc.)",
    ),
    Column(
        "Block Sizes",
        "block_sizes",
        "get_supported_kernel_block_sizes",
        SIZES,
        "Supported KV cache block sizes (%N means multiples of N)",
    ),
    Column(
        "Head Sizes",
        "head_sizes",
        "supports_head_size",
        SIZES,
        "Supported attention head sizes",
    ),
    Column(
        "Compute Cap.",
        "compute_capability",
        "supports_compute_capability",
        CAPABILITIES,
        "Required CUDA compute capability (N/A for non-CUDA backends)",
    ),
    Column(
        "Attention Types",
        "attn_types",
        "supports_attn_type",
        ATTN_TYPES,
        "Supported attention patterns (Decoder, Encoder, Enc-Dec)",
    ),
    _flag("Sink", "supports_sink", "Attention sink support (for StreamingLLM)"),
    _flag("Sparse", "is_sparse", "Sparse attention support (MLA only)"),
    _flag("MM Prefix", "supports_mm_prefix", "Multimodal prefix full attention support"),
    _flag(
        "Non-Causal",
        "supports_non_causal",
        "Non-causal (bidirectional) attention support for decoder models",
        since="0.21",
    ),
    _flag(
        "DCP",
        "supports_dcp",
        "Decode Context Parallelism support (`--decode-context-parallel-size`)",
        since="0.17",
        impl="can_return_lse_for_decode",
    ),
    # capabilities a `:columns:` option can ask for (not on vLLM's page)
    _extra("Sliding Window", "supports_sliding_window", "Sliding window attention support"),
    _extra("ALiBi sqrt", "supports_alibi_sqrt", "ALiBi with square-root slopes support"),
    _extra(
        "Per-Head Quant Scales",
        "supports_per_head_quant_scales",
        "Per-head quantization scales for the KV cache",
    ),
    _extra(
        "Batch Invariance",
        "supports_batch_invariance",
        "Batch-invariant (deterministic) results support",
    ),
    _extra(
        "KV Connector",
        "supports_kv_connector",
        "KV connector (disaggregated prefill, KV transfer) support",
    ),
    _extra("PCP", "supports_pcp", "Prefill Context Parallelism support"),
    _extra(
        "R-SWA",
        "supports_rswa",
        "Reference Sliding Window Attention (prompt global, later tokens windowed)",
    ),
    _extra(
        "Non-Causal DCP", "supports_non_causal_dcp", "Non-causal attention together with DCP (MLA)"
    ),
    _extra(
        "CPU Query Lens Mismatch",
        "supports_device_cpu_query_lens_mismatch",
        "Runs batches whose device and CPU query lengths differ",
    ),
    # asked of the metadata builder, not the backend: only the runtime profile has it
    Column(
        "CUDA Graphs",
        "cudagraph",
        "get_cudagraph_support",
        CUDAGRAPH_LEVEL,
        "CUDA-graph support the metadata builder declares (ALWAYS, UNIFORM_BATCH, ...)",
        on_page=False,
    ),
)
COLUMN: dict[str, Column] = {c.title: c for c in COLUMNS}

#: Columns of the feature tables, in the order vLLM's pages use them.
FEATURE_COLUMNS: tuple[str, ...] = (
    "Backend",
    "Version",
    "Dtypes",
    "KV Dtypes",
    "Block Sizes",
    "Head Sizes",
    "Sink",
    "Non-Causal",
    "Sparse",
    "MM Prefix",
    "DCP",
    "Attention Types",
    "Compute Cap.",
)
#: The cells the runtime profile asks the class for, in the order it asks them.
ASKED: tuple[Column, ...] = tuple(c for c in COLUMNS if c.question and c.on_page)
#: The flag columns of vLLM's page, in the order they are read and asked.
FLAGS: tuple[Column, ...] = tuple(c for c in ASKED if c.kind == FLAG)
#: Columns of later pages (title -> row field), in page order.
OPTIONAL_COLUMNS: dict[str, str] = {t: COLUMN[t].field for t in FEATURE_COLUMNS if COLUMN[t].since}
#: Further capability columns a ``:columns:`` option can ask for -> the classmethod.
EXTRA_COLUMNS: dict[str, str] = {
    c.title: c.question for c in COLUMNS if not c.on_page and c.kind == FLAG
}
#: Columns only the runtime profile can fill (a ``:columns:`` option may ask for them).
RUNTIME_COLUMNS: tuple[str, ...] = tuple(c.title for c in COLUMNS if c.kind == CUDAGRAPH_LEVEL)
#: Columns whose cells are lists of code names, shown as inline literals.
LITERAL_LIST_COLUMNS: frozenset[str] = frozenset(c.title for c in COLUMNS if c.literal)
#: (column, description) rows of the legend, in page order, then the extra columns.
LEGEND: tuple[tuple[str, str], ...] = tuple(
    (t, COLUMN[t].legend) for t in (*FEATURE_COLUMNS, *EXTRA_COLUMNS) if COLUMN[t].legend
)
