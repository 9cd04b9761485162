"""Demo Triton MLA decode backend: everything but its kernels comes from the MLA base."""

from vllm.v1.attention.backends.mla.common import MLACommonBackend, MLACommonImpl


class TritonMLAImpl(MLACommonImpl):
    pass


class TritonMLABackend(MLACommonBackend):
    @staticmethod
    def get_impl_cls() -> type[TritonMLAImpl]:
        return TritonMLAImpl
