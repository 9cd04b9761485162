"""The shape of the selector's table: its dimensions, their values and the kinds of
its entries.

Plain data in the model so that the page's renderer and the Sphinx glue read the
table's shape without importing the selector's builder.
"""

from __future__ import annotations

from typing import Any

from sphinxext_attn.model.environment import MODEL_ATTN_TYPES
from sphinxext_attn.vocab.names import ATTN_TYPES

FLAGS = ("use_mla", "use_sparse", "has_sink", "use_mm_prefix", "use_non_causal")
#: every dimension and its default values; the first value of each is not special
GRID: dict[str, tuple[Any, ...]] = {
    "capability": ("8.0", "8.6", "8.9", "9.0", "10.0", "10.3", "12.0"),
    "dtype": ("fp16", "bf16", "fp32"),
    "kv_cache_dtype": ("auto", "fp8", "fp8_e4m3", "fp8_e5m2", "bfloat16"),
    "head_size": (64, 80, 96, 128, 192, 256, 512, 576),
    "block_size": (None, 16, 32, 64, 128),
    "num_heads": (None, 8, 16, 32, 128),
    "attn_type": ATTN_TYPES,
    **{flag: (False, True) for flag in FLAGS},
}
#: dimensions other than the capability, in the order the table indexes them
DIMS = tuple(d for d in GRID if d != "capability")
#: settings of the layer and the model that some platforms' code reads besides the
#: grid's (ROCm: a KV connector reorders its list, an encoder-decoder model keeps
#: ROCM_ATTN out); tried after the grid's on every platform but CUDA, and kept in a
#: table where an answer depends on them (:func:`keep_used`)
LAYER_GRID: dict[str, tuple[Any, ...]] = {
    "use_kv_connector": (False, True),
    "model_attn_type": MODEL_ATTN_TYPES,
}
#: where a baseline is looked for first (MLA and sparsity decide most of the rest)
_FIRST = ("use_mla", "use_sparse", "head_size", "dtype", "kv_cache_dtype", "attn_type")
SEARCH_ORDER: tuple[str, ...] = _FIRST + tuple(d for d in DIMS if d not in _FIRST)


def query_value(value: Any) -> str:
    """A grid value as the page's query string spells it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


#: the kind of a rule platform's table (``"kind"`` in the shipped data)
RULES = "rules"
#: a rule platform's outcome where its rules could not be evaluated (``select`` says so too)
UNKNOWN = "unknown"
