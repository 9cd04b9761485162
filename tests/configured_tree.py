"""A small vLLM-shaped tree's own engine config (``vllm/config``): the classes the
option checks read (issue 35)."""

CONFIG_FILES = {
    "vllm/config/__init__.py": "from vllm.config.vllm import VllmConfig\n",
    "vllm/config/vllm.py": (
        "import enum\nfrom pydantic import Field\n"
        "from .attention import AttentionConfig\nfrom .cache import CacheConfig\n\n\n"
        "class Level(enum.IntEnum):\n    O0 = 0\n    O2 = 2\n    _310P = 3\n\n\n"
        "class SpeculativeConfig:\n    method: str = 'ngram'\n\n\n"
        "class VllmConfig:\n"
        "    attention_config: AttentionConfig = Field(default_factory=AttentionConfig)\n"
        "    cache_config: CacheConfig = Field(default_factory=CacheConfig)\n"
        "    speculative_config: SpeculativeConfig | None = None\n"
        "    level: Level = Level.O2\n"
    ),
    "vllm/config/attention.py": (
        "from typing import Literal\n\n"
        "from vllm.v1.attention.backends.registry import AttentionBackendEnum\n\n\n"
        "class AttentionConfig:\n"
        "    backend: AttentionBackendEnum | None = None\n"
        "    flash_attn_version: Literal[2, 3] | None = None\n"
        "    use_trtllm_attention: bool | None = None\n"
        "    max_splits: int = 32\n"
    ),
    "vllm/config/cache.py": (
        "from typing import Literal\n\nCacheDType = Literal['auto', 'fp8']\n\n\n"
        "class CacheConfig:\n    cache_dtype: CacheDType = 'auto'\n    block_size: int = 16\n"
    ),
}
