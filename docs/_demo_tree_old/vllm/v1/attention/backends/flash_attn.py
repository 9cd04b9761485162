"""Demo FlashAttention backend."""

from typing import ClassVar

import torch

from vllm.platforms.interface import DeviceCapability
from vllm.v1.attention.backend import AttentionBackend, AttentionImpl, AttentionType, MultipleOf
from vllm.v1.attention.backends.fa_utils import flash_attn_supports_fp8, flash_attn_supports_sinks


class FlashAttentionImpl(AttentionImpl):
    supports_dcp = True


class FlashAttentionBackend(AttentionBackend):
    supported_dtypes: ClassVar[list[torch.dtype]] = [torch.float16, torch.bfloat16]
    supported_kv_cache_dtypes: ClassVar[list[str]] = ["auto", "bfloat16"]

    @staticmethod
    def get_impl_cls() -> type[FlashAttentionImpl]:
        return FlashAttentionImpl

    @staticmethod
    def get_supported_kernel_block_sizes() -> list[int | MultipleOf]:
        return [MultipleOf(16)]

    @classmethod
    def supports_kv_cache_dtype(cls, kv_cache_dtype: str | None) -> bool:
        if kv_cache_dtype is not None and kv_cache_dtype.startswith("fp8"):
            return flash_attn_supports_fp8()  # FA3 only
        return super().supports_kv_cache_dtype(kv_cache_dtype)

    @classmethod
    def supports_sink(cls) -> bool:
        return flash_attn_supports_sinks()

    @classmethod
    def supports_head_size(cls, head_size: int) -> bool:
        return head_size % 8 == 0 and head_size <= 256

    @classmethod
    def supports_attn_type(cls, attn_type: str) -> bool:
        return attn_type in (
            AttentionType.DECODER,
            AttentionType.ENCODER,
            AttentionType.ENCODER_ONLY,
            AttentionType.ENCODER_DECODER,
        )

    @classmethod
    def supports_compute_capability(cls, capability: DeviceCapability) -> bool:
        return capability >= DeviceCapability(8, 0)
