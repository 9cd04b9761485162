"""The words of the footnotes under the standard table.

Which footnotes a page needs, and what they say, follows from the variants the
analysis found, so the wording lives with the analysis; the seed's exact
sentences are kept for the FA2/FA3 and Native/TRTLLM layout it knew.
"""

from __future__ import annotations

FOOTNOTE_FLASHINFER = (
    "FlashInfer uses TRTLLM attention on Blackwell (SM100), which supports sinks. "
    "Disable via `--attention-config.use_trtllm_attention=0`."
)
FOOTNOTE_FLASH_ATTN = (
    "Specify the FlashAttention version via `--attention-config.flash_attn_version=2` "
    "or `3`. Default is FA3 on SM90, FA2 otherwise."
)


def flashinfer_footnote(has_xqa: bool) -> str:
    """The FlashInfer variants' footnote (the seed's words when there is no XQA path)."""
    if not has_xqa:
        return FOOTNOTE_FLASHINFER
    return (
        "Native is FlashInfer's own kernel path. XQA is the decode path on the exact "
        "capability shown, trtllm-gen the TRTLLM path on Blackwell, which supports sinks. "
        "Disable XQA and trtllm-gen via `--attention-config.use_trtllm_attention=0`."
    )


def flash_attn_footnote(versions: list[int], capability: dict[int, str]) -> str:
    """The FlashAttention versions' footnote (the seed's words for FA2/FA3)."""
    if versions == [2, 3] and capability.get(3) == "9.x":
        return FOOTNOTE_FLASH_ATTN
    choices = [f"`{v}`" for v in versions]
    listed = (
        ", ".join(choices[:-1]) + f", or {choices[-1]}"
        if len(choices) > 2
        else " or ".join(choices)
    )
    where = [
        f"FA{v} on SM {capability[v]}" for v in sorted(versions, reverse=True) if v in capability
    ]
    default = ", ".join(where + ["FA2 otherwise"])
    return (
        "Specify the FlashAttention version via "
        f"`--attention-config.flash_attn_version=N` ({listed}). Default: {default}."
    )
