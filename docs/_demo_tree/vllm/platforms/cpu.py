"""Demo CPU platform: one backend, and the configurations it refuses."""

from vllm.platforms.interface import Platform, PlatformEnum
from vllm.v1.attention.backends.registry import AttentionBackendEnum


class CpuPlatform(Platform):
    _enum = PlatformEnum.CPU

    @classmethod
    def get_attn_backend_cls(cls, selected_backend, attn_selector_config, num_heads=None) -> str:
        if attn_selector_config.use_mla:
            raise NotImplementedError("MLA is not supported on CPU.")
        if attn_selector_config.kv_cache_dtype not in (None, "auto", "bfloat16"):
            raise ValueError(
                f"--kv-cache-dtype {attn_selector_config.kv_cache_dtype} is not supported on CPU."
            )
        return AttentionBackendEnum.CPU_ATTN.get_path()
