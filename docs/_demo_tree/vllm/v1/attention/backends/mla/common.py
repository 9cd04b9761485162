"""Demo MLA base classes: what every MLA decode backend shares."""

from typing import ClassVar

from vllm.v1.attention.backend import AttentionBackend, AttentionImpl


class MLACommonImpl(AttentionImpl):
    supports_dcp = True


class MLACommonBackend(AttentionBackend):
    # the latent cache holds one compressed vector per token: 16-bit or fp8
    supported_kv_cache_dtypes: ClassVar[list[str]] = ["auto", "fp8"]

    @classmethod
    def get_supported_head_sizes(cls) -> list[int]:
        return [576]  # 512 latent + 64 rotary

    @classmethod
    def is_mla(cls) -> bool:
        return True
