"""Demo CPU backend: its compute capability column reads N/A; its KV cache dtypes are
the interface's defaults."""

from typing import ClassVar

import torch

from vllm.v1.attention.backend import AttentionBackend, AttentionImpl, AttentionType


class CPUAttentionImpl(AttentionImpl):
    pass


class CPUAttentionBackend(AttentionBackend):
    supported_dtypes: ClassVar[list[torch.dtype]] = [
        torch.float16,
        torch.bfloat16,
        torch.float32,
    ]

    @staticmethod
    def get_impl_cls() -> type[CPUAttentionImpl]:
        return CPUAttentionImpl

    @classmethod
    def get_supported_head_sizes(cls) -> list[int]:
        return [64, 80, 128]

    @classmethod
    def supports_attn_type(cls, attn_type: str) -> bool:
        return attn_type in (AttentionType.DECODER, AttentionType.ENCODER_ONLY)
