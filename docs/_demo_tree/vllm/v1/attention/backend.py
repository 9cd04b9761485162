"""Demo backend interface: the questions vLLM asks every backend class.

Each backend answers through the classmethods below; a subclass overrides only
what differs from these defaults (fp16/bf16, an `auto` or 16-bit KV cache, any
block size and head size, decoder attention on any GPU).
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, ClassVar

import torch

if TYPE_CHECKING:
    from vllm.config.cache import CacheDType
    from vllm.platforms.interface import DeviceCapability


class AttentionType(str, Enum):  # noqa: UP042 (vLLM supports Python 3.10)
    DECODER = "decoder"
    ENCODER = "encoder"
    ENCODER_ONLY = "encoder_only"
    ENCODER_DECODER = "encoder_decoder"


@dataclass(frozen=True)
class MultipleOf:
    """A kernel block size constraint: any multiple of `base`."""

    base: int


class AttentionImpl:
    """What a backend's kernels can do once built."""

    supports_dcp: bool = False


class AttentionBackend(ABC):
    supported_dtypes: ClassVar[list[torch.dtype]] = [torch.float16, torch.bfloat16]
    supported_kv_cache_dtypes: ClassVar[list["CacheDType"]] = ["auto", "float16", "bfloat16"]

    @staticmethod
    @abstractmethod
    def get_impl_cls() -> type[AttentionImpl]:
        raise NotImplementedError

    @staticmethod
    def get_supported_kernel_block_sizes() -> list[int | MultipleOf]:
        return [MultipleOf(1)]

    @classmethod
    def get_supported_head_sizes(cls) -> list[int]:
        return []  # empty: every head size

    @classmethod
    def supports_head_size(cls, head_size: int) -> bool:
        sizes = cls.get_supported_head_sizes()
        return not sizes or head_size in sizes

    @classmethod
    def supports_dtype(cls, dtype: torch.dtype) -> bool:
        return dtype in cls.supported_dtypes

    @classmethod
    def supports_kv_cache_dtype(cls, kv_cache_dtype: "CacheDType | None") -> bool:
        if kv_cache_dtype is None:
            return True
        return kv_cache_dtype in cls.supported_kv_cache_dtypes

    @classmethod
    def supports_block_size(cls, block_size: int | None) -> bool:
        if block_size is None:
            return True
        for size in cls.get_supported_kernel_block_sizes():
            step = size.base if isinstance(size, MultipleOf) else size
            if block_size % step == 0:
                return True
        return False

    @classmethod
    def supports_compute_capability(cls, capability: "DeviceCapability") -> bool:
        return True

    @classmethod
    def supports_attn_type(cls, attn_type: str) -> bool:
        return attn_type == AttentionType.DECODER

    @classmethod
    def is_mla(cls) -> bool:
        return False

    @classmethod
    def is_sparse(cls) -> bool:
        return False

    @classmethod
    def supports_sink(cls) -> bool:
        return False

    @classmethod
    def supports_mm_prefix(cls) -> bool:
        return False

    @classmethod
    def supports_non_causal(cls) -> bool:
        return False

    @classmethod
    def supports_dcp(cls) -> bool:
        try:
            return cls.get_impl_cls().supports_dcp
        except NotImplementedError:
            return False

    @classmethod
    def validate_configuration(
        cls,
        head_size: int,
        dtype: torch.dtype,
        kv_cache_dtype: "CacheDType | None",
        block_size: int | None,
        use_mla: bool,
        has_sink: bool,
        use_sparse: bool,
        use_mm_prefix: bool,
        device_capability: "DeviceCapability",
        attn_type: str,
        use_non_causal: bool = False,
        use_dcp: bool = False,
        use_kv_connector: bool = False,
    ) -> list[str]:
        """Why this backend cannot run the configuration (empty: it can)."""
        reasons = []
        if not cls.supports_head_size(head_size):
            reasons.append("head_size not supported")
        if not cls.supports_dtype(dtype):
            reasons.append("dtype not supported")
        if not cls.supports_kv_cache_dtype(kv_cache_dtype):
            reasons.append("kv_cache_dtype not supported")
        if not cls.supports_block_size(block_size):
            reasons.append("block_size not supported")
        if use_mm_prefix and not cls.supports_mm_prefix():
            reasons.append("multimodal prefix attention not supported")
        if use_mla != cls.is_mla():
            reasons.append("MLA not supported" if use_mla else "non-MLA not supported")
        if has_sink and not cls.supports_sink():
            reasons.append("attention sinks not supported")
        if use_sparse != cls.is_sparse():
            reasons.append("sparse not supported" if use_sparse else "non-sparse not supported")
        if not cls.supports_compute_capability(device_capability):
            reasons.append("compute capability not supported")
        if not cls.supports_attn_type(attn_type):
            reasons.append(f"attention type {attn_type} not supported")
        if use_non_causal and not cls.supports_non_causal():
            reasons.append("non-causal attention not supported")
        if use_dcp and not cls.supports_dcp():
            reasons.append("DCP not supported")
        return reasons
