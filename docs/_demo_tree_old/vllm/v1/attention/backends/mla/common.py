"""Demo MLA base class."""

from vllm.v1.attention.backend import AttentionBackend


class MLACommonBackend(AttentionBackend):
    @classmethod
    def is_mla(cls) -> bool:
        return True
