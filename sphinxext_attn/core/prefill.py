"""MLA prefill backends, read from the ``use_*_prefill`` selectors.

vLLM chooses the MLA prefill kernel at runtime; each optional kernel has a
selector function whose capability-family check tells where it runs.
FlashAttention is the fallback and always present.
"""

from __future__ import annotations

from dataclasses import dataclass

from sphinxext_attn.core.flags import family_text, find_function, first_family_in
from sphinxext_attn.core.models import Location, PrefillBackend
from sphinxext_attn.core.source import SourceTree

MLA_ATTENTION_FILE = "vllm/model_executor/layers/attention/mla_attention.py"


@dataclass(frozen=True)
class _Selector:
    function: str
    name: str
    description: str
    enable: str
    disable: str
    notes: str


#: Selector functions in the order ``MLACommonImpl.__init__`` tries them.
SELECTORS: tuple[_Selector, ...] = (
    _Selector(
        "use_trtllm_ragged_deepseek_prefill",
        "TRT-LLM Ragged‡",
        "TensorRT-LLM ragged attention",
        "Default on SM100",
        "`-ac.use_trtllm_ragged_deepseek_prefill=0`",
        "DeepSeek R1 dims only",
    ),
    _Selector(
        "use_flashinfer_prefill",
        "FlashInfer",
        "FlashInfer CUTLASS backend",
        "`-ac.disable_flashinfer_prefill=0`",
        "`-ac.disable_flashinfer_prefill=1`",
        "DeepSeek R1 dims only",
    ),
    _Selector(
        "use_cudnn_prefill",
        "cuDNN",
        "cuDNN-based attention",
        "`-ac.use_cudnn_prefill=1`",
        "`-ac.use_cudnn_prefill=0`",
        "",
    ),
)
FALLBACK = PrefillBackend(
    name="FlashAttention",
    description="FlashAttention varlen (FA2/FA3)",
    compute_capability="Any",
    enable="Default fallback",
    disable="Use other backends",
    notes="FA3 on SM90, FA2 otherwise",
)


def read_prefill(tree: SourceTree) -> list[PrefillBackend]:
    if not tree.exists(MLA_ATTENTION_FILE):
        return []
    module = tree.parse(MLA_ATTENTION_FILE)
    if module is None:
        return []
    rows: list[PrefillBackend] = []
    for sel in SELECTORS:
        func = find_function(module, sel.function)
        family = first_family_in(func)
        if func is None or family is None:
            continue
        rows.append(
            PrefillBackend(
                sel.name,
                sel.description,
                family_text(family),
                sel.enable,
                sel.disable,
                sel.notes,
                source=Location(MLA_ATTENTION_FILE, func.lineno),
            )
        )
    rows.append(FALLBACK)
    return rows
