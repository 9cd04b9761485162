"""Demo Triton MLA decode backend."""

from vllm.v1.attention.backends.mla.common import MLACommonBackend


class TritonMLABackend(MLACommonBackend):
    pass
