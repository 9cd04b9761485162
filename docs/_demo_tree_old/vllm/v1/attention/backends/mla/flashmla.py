"""Demo FlashMLA decode backend."""

from typing import ClassVar

from vllm.platforms.interface import DeviceCapability
from vllm.v1.attention.backends.mla.common import MLACommonBackend


class FlashMLABackend(MLACommonBackend):
    supported_kv_cache_dtypes: ClassVar[list[str]] = ["auto", "fp8"]

    @staticmethod
    def get_supported_kernel_block_sizes() -> list[int]:
        return [64]

    @classmethod
    def supports_compute_capability(cls, capability: DeviceCapability) -> bool:
        return capability.major in [9, 10]
