"""Demo FlashMLA decode backend."""

from typing import ClassVar

from vllm.platforms.interface import DeviceCapability
from vllm.v1.attention.backends.mla.common import MLACommonBackend, MLACommonImpl


class FlashMLAImpl(MLACommonImpl):
    pass


class FlashMLABackend(MLACommonBackend):
    supported_kv_cache_dtypes: ClassVar[list[str]] = ["auto", "fp8"]

    @staticmethod
    def get_impl_cls() -> type[FlashMLAImpl]:
        return FlashMLAImpl

    @staticmethod
    def get_supported_kernel_block_sizes() -> list[int]:
        return [64]

    @classmethod
    def supports_compute_capability(cls, capability: DeviceCapability) -> bool:
        # the kernels are built for sm90a and the sm100 family only
        return capability.to_int() in (90, 100, 103)
