"""Demo selector: the configuration a model layer asks a backend for."""

from typing import NamedTuple

import torch

from vllm.config.cache import CacheDType
from vllm.v1.attention.backend import AttentionType


class AttentionSelectorConfig(NamedTuple):
    head_size: int
    dtype: torch.dtype
    kv_cache_dtype: CacheDType | None
    block_size: int | None
    use_mla: bool = False
    has_sink: bool = False
    use_sparse: bool = False
    use_mm_prefix: bool = False
    attn_type: str = AttentionType.DECODER
    use_non_causal: bool = False
    use_dcp: bool = False
    use_kv_connector: bool = False


def get_attn_backend_cls(config: AttentionSelectorConfig, num_heads: int | None = None) -> str:
    """The class path of the backend the current platform picks for `config`."""
    from vllm.platforms import current_platform

    return current_platform.get_attn_backend_cls(config, num_heads=num_heads)
