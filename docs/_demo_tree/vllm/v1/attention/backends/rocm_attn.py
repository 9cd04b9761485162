"""Demo ROCm backend: KV cache dtypes come from a method, not a class variable.

It declares no ``supported_kv_cache_dtypes`` (so it inherits the interface's list,
which its KV Dtypes cell shows), while its ``supports_kv_cache_dtype``, which the
selection asks, accepts ``auto`` and ``fp8``.
"""

from vllm.v1.attention.backend import AttentionBackend, AttentionImpl


class RocmAttentionImpl(AttentionImpl):
    pass


class RocmAttentionBackend(AttentionBackend):
    @staticmethod
    def get_impl_cls() -> type[RocmAttentionImpl]:
        return RocmAttentionImpl

    @classmethod
    def supports_kv_cache_dtype(cls, kv_cache_dtype: str | None) -> bool:
        return kv_cache_dtype in ["auto", "fp8"]

    @staticmethod
    def get_supported_kernel_block_sizes() -> list[int]:
        return [16, 32]
