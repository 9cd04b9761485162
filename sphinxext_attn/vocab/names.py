"""The names vLLM uses for the inputs of its questions, and the grids they are asked on.

The grids are those vLLM's own answers were collected on (its README's head
sizes, every compute capability it tells apart); the names are how vLLM
spells dtypes and attention types and how the tables and options spell them.
"""

from __future__ import annotations

#: Model dtypes: the tables' label and the torch dtype vLLM is asked with.
DTYPES: tuple[tuple[str, str], ...] = (
    ("fp16", "torch.float16"),
    ("bf16", "torch.bfloat16"),
    ("fp32", "torch.float32"),
)
#: torch dtype attribute (``float16``) -> the tables' label (``fp16``).
DTYPE_LABELS: dict[str, str] = {t.removeprefix("torch."): label for label, t in DTYPES}
#: Further names an option may give a dtype by.
_DTYPE_ALIASES = {"fp16": ("half",), "fp32": ("float",)}
#: Every name an option accepts for a model dtype -> the torch dtype (label,
#: torch attribute, aliases; in this order in messages).
DTYPE_NAMES: dict[str, str] = {
    name: torch
    for label, torch in DTYPES
    for name in (label, torch.removeprefix("torch."), *_DTYPE_ALIASES.get(label, ()))
}

#: The fp8 KV cache dtypes, in vLLM's order.
FP8_KV_DTYPES: tuple[str, ...] = ("fp8", "fp8_e4m3", "fp8_e5m2")
#: KV cache dtypes asked when the tree declares no ``CacheDType`` literal.
FALLBACK_KV_DTYPES: tuple[str, ...] = ("auto", "float16", "bfloat16", *FP8_KV_DTYPES)

#: vLLM's attention types, by ``AttentionType`` member name, as the tables name them.
ATTN_TYPE_NAMES: dict[str, str] = {
    "DECODER": "Decoder",
    "ENCODER": "Encoder",
    "ENCODER_ONLY": "Encoder Only",
    "ENCODER_DECODER": "Enc-Dec",
}
ATTN_TYPES: tuple[str, ...] = tuple(ATTN_TYPE_NAMES)

#: Every compute capability vLLM tells apart (the questions' grid).
CAPABILITIES: tuple[tuple[int, int], ...] = (
    (7, 0), (7, 5), (8, 0), (8, 6), (8, 7), (8, 9),
    (9, 0), (10, 0), (10, 3), (11, 0), (12, 0), (12, 1),
)  # fmt: skip
#: The capabilities vLLM's answers were collected on (the JSON lists these).
SCORED_CAPABILITIES = frozenset(c for c in CAPABILITIES if c != (8, 7))
#: The head sizes vLLM's answers were collected on (its README's grid, 8 to 1024).
HEAD_SIZES: tuple[int, ...] = (
    8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 112, 120, 128, 160, 192, 224, 256,
    288, 320, 384, 512, 576, 640, 768, 1024,
)  # fmt: skip

# -- names in vLLM's code the analysis looks up -------------------------------
#: the CUDA platform's priority function
PRIORITY_FUNCTION = "_get_backend_priorities"
#: the backend registry's enum
REGISTRY_ENUM = "AttentionBackendEnum"
#: the enum of attention types and the literal of KV cache dtypes
ATTENTION_TYPE_ENUM = "AttentionType"
CACHE_DTYPE_LITERAL = "CacheDType"

#: the entry-point group of vLLM's platform plugins (vllm-ascend, vllm-gaudi)
PLATFORM_PLUGIN_GROUP = "vllm.platform_plugins"
