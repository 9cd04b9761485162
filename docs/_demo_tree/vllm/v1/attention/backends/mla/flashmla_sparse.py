"""Demo sparse FlashMLA decode backend."""

from typing import ClassVar

import torch

from vllm.platforms.interface import DeviceCapability
from vllm.v1.attention.backends.mla.common import MLACommonBackend, MLACommonImpl


class FlashMLASparseImpl(MLACommonImpl):
    supports_dcp = False


class FlashMLASparseBackend(MLACommonBackend):
    supported_dtypes: ClassVar[list[torch.dtype]] = [torch.bfloat16]
    supported_kv_cache_dtypes: ClassVar[list[str]] = ["auto", "fp8_ds_mla"]

    @staticmethod
    def get_impl_cls() -> type[FlashMLASparseImpl]:
        return FlashMLASparseImpl

    @staticmethod
    def get_supported_kernel_block_sizes() -> list[int]:
        return [64]

    @classmethod
    def get_supported_head_sizes(cls) -> list[int]:
        return [576]

    @classmethod
    def is_sparse(cls) -> bool:
        return True

    @classmethod
    def supports_compute_capability(cls, capability: DeviceCapability) -> bool:
        return capability.major == 10
