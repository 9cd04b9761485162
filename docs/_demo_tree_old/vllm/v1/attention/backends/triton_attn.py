"""Demo Triton backend: portable, so no compute capability check.

Its head sizes and attention types are decided by conditions, not lists.
"""

from typing import ClassVar

import torch

from vllm.v1.attention.backend import AttentionBackend, AttentionImpl, AttentionType, MultipleOf


class TritonAttentionImpl(AttentionImpl):
    pass


class TritonAttentionBackend(AttentionBackend):
    supported_dtypes: ClassVar[list[torch.dtype]] = [
        torch.float16,
        torch.bfloat16,
        torch.float32,
    ]
    supported_kv_cache_dtypes: ClassVar[list[str]] = ["auto"]

    @staticmethod
    def get_impl_cls() -> type[TritonAttentionImpl]:
        return TritonAttentionImpl

    @staticmethod
    def get_supported_kernel_block_sizes() -> list[MultipleOf]:
        return [MultipleOf(32)]

    @classmethod
    def supports_head_size(cls, head_size: int) -> bool:
        # one program per 32 lanes of a head, up to a tile of 256
        return head_size % 32 == 0 and head_size <= 256

    @classmethod
    def supports_attn_type(cls, attn_type: str) -> bool:
        return attn_type != AttentionType.ENCODER_DECODER

    @classmethod
    def supports_mm_prefix(cls) -> bool:
        return True
