"""Demo registry: each member's value is the class path of a backend."""

import importlib
from enum import Enum


class AttentionBackendEnum(Enum):
    """The backends the demo knows about."""

    FLASH_ATTN = "vllm.v1.attention.backends.flash_attn.FlashAttentionBackend"
    FLASHINFER = "vllm.v1.attention.backends.flashinfer.FlashInferBackend"
    TRITON_ATTN = "vllm.v1.attention.backends.triton_attn.TritonAttentionBackend"
    CPU_ATTN = "vllm.v1.attention.backends.cpu_attn.CPUAttentionBackend"
    ROCM_ATTN = "vllm.v1.attention.backends.rocm_attn.RocmAttentionBackend"
    FLASHMLA = "vllm.v1.attention.backends.mla.flashmla.FlashMLABackend"
    TRITON_MLA = "vllm.v1.attention.backends.mla.triton_mla.TritonMLABackend"
    # kept wrapped, as vLLM's 88-column style writes long class paths
    # fmt: off
    FLASHMLA_SPARSE = (
        "vllm.v1.attention.backends.mla.flashmla_sparse.FlashMLASparseBackend"
    )
    # fmt: on
    TORCH_SDPA = ""  # not a decoder backend: left out of the tables
    CUSTOM = None  # a placeholder, filled in at run time

    def get_path(self) -> str:
        if not self.value:
            raise ValueError(f"Backend {self.name} must be registered before use")
        return self.value

    def get_class(self) -> type:
        """The backend class, imported from its path."""
        module_name, _, class_name = self.get_path().rpartition(".")
        return getattr(importlib.import_module(module_name), class_name)
