"""Demo XPU platform: an ordered if/else, no priority list."""

import torch

from vllm.platforms.interface import Platform, PlatformEnum
from vllm.v1.attention.backends.registry import AttentionBackendEnum


class XPUPlatform(Platform):
    _enum = PlatformEnum.XPU

    @classmethod
    def get_attn_backend_cls(cls, selected_backend, attn_selector_config, num_heads=None) -> str:
        if attn_selector_config.use_sparse:
            raise NotImplementedError("Sparse attention is not supported on XPU.")
        if attn_selector_config.use_mla:
            return AttentionBackendEnum.TRITON_MLA.get_path()
        if attn_selector_config.dtype == torch.float32:
            return AttentionBackendEnum.TRITON_ATTN.get_path()
        return AttentionBackendEnum.FLASH_ATTN.get_path()
