"""Demo Triton backend: portable, so no compute capability check."""

from typing import ClassVar

import torch

from vllm.v1.attention.backend import AttentionBackend, MultipleOf


class TritonAttentionBackend(AttentionBackend):
    supported_dtypes: ClassVar[list[torch.dtype]] = [
        torch.float16,
        torch.bfloat16,
        torch.float32,
    ]
    supported_kv_cache_dtypes: ClassVar[list[str]] = ["auto"]

    @staticmethod
    def get_supported_kernel_block_sizes() -> list[MultipleOf]:
        return [MultipleOf(32)]

    @classmethod
    def supports_mm_prefix(cls) -> bool:
        return True
