"""Demo FlashInfer backend."""

from typing import ClassVar

import torch

from vllm.platforms.interface import DeviceCapability
from vllm.utils.flashinfer import supports_trtllm_attention
from vllm.v1.attention.backend import AttentionBackend, AttentionImpl


class FlashInferImpl(AttentionImpl):
    pass


class FlashInferBackend(AttentionBackend):
    supported_dtypes: ClassVar[list[torch.dtype]] = [torch.float16, torch.bfloat16]
    supported_kv_cache_dtypes: ClassVar[list[str]] = ["auto", "fp8", "fp8_e4m3"]

    @staticmethod
    def get_impl_cls() -> type[FlashInferImpl]:
        return FlashInferImpl

    @staticmethod
    def get_supported_kernel_block_sizes() -> list[int]:
        return [16, 32, 64]

    @classmethod
    def get_supported_head_sizes(cls) -> list[int]:
        return [64, 128, 256]

    @classmethod
    def supports_sink(cls) -> bool:
        return supports_trtllm_attention()  # the TRTLLM kernels on Blackwell

    @classmethod
    def supports_compute_capability(cls, capability: DeviceCapability) -> bool:
        return capability >= DeviceCapability(7, 5) and capability <= DeviceCapability(12, 1)
