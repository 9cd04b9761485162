"""A small tree whose backends' full checks (``validate_configuration`` and
``supports_combination``) refuse what their own column methods admit, in the
ways vLLM writes them: a helper that reads the GPU (only Hopper for the dense
kernel), a head-size route, a block-size rule, a refusal only with one KV cache
dtype (another configuration passes), a package not installed (every
configuration refused), a route that reads the engine config where one is
current, and a class that keeps the interface's check."""

from __future__ import annotations

from pathlib import Path

from runtime_trees import BACKEND_INTERFACE, RUNTIME_BACKEND_SOURCE, runtime_tree
from treebuilder import DEFAULT_ENTRIES, REGISTRY, dedent, registry_source

MODULE = "vllm/v1/attention/backends/checked.py"
HELPERS = "vllm/v1/attention/ops/kernels.py"

#: ``supports_combination``'s signature as vLLM 0.33 writes it, for a test's own backend
COMBINATION_SIGNATURE = """
    @classmethod
    def supports_combination(
        cls, head_size, dtype, kv_cache_dtype, block_size, use_mla, has_sink,
        use_sparse, use_mm_prefix, device_capability,
    ):
"""

#: the interface's full check, shaped as vLLM's: each column's method on its own
#: input, then the combination on the whole configuration
CHECK_SOURCE = """

    @classmethod
    def supports_block_size(cls, block_size):
        return True

    @classmethod
    def supports_combination(
        cls, head_size, dtype, kv_cache_dtype, block_size, use_mla, has_sink,
        use_sparse, use_mm_prefix, device_capability,
    ):
        return None

    @classmethod
    def validate_configuration(
        cls, head_size, dtype, kv_cache_dtype, block_size, use_mla, has_sink,
        use_sparse, use_mm_prefix, device_capability, attn_type,
    ):
        invalid_reasons = []
        if not cls.supports_head_size(head_size):
            invalid_reasons.append("head_size not supported")
        if not cls.supports_block_size(block_size):
            invalid_reasons.append("block_size not supported")
        if use_mla != cls.is_mla():
            invalid_reasons.append("MLA not supported")
        if use_sparse != cls.is_sparse():
            invalid_reasons.append("sparse not supported")
        if not cls.supports_compute_capability(device_capability):
            invalid_reasons.append("compute capability not supported")
        reason = cls.supports_combination(
            head_size, dtype, kv_cache_dtype, block_size, use_mla, has_sink,
            use_sparse, use_mm_prefix, device_capability,
        )
        if reason is not None:
            invalid_reasons.append(reason)
        return invalid_reasons
"""

HELPERS_SOURCE = """
from vllm.platforms import current_platform


def is_dense_supported():
    if not current_platform.is_device_capability_family(90):
        return False, "Dense kernel is only supported on Hopper devices."
    return True, None


def is_sparse_supported():
    if current_platform.get_device_capability().major not in (9, 10):
        return False, "Sparse kernel is only supported on Hopper and Blackwell."
    return True, None
"""

BACKENDS_SOURCE = """
import torch

from vllm.v1.attention.backend import AttentionBackend, MultipleOf


class DenseBackend(AttentionBackend):
    @classmethod
    def get_supported_head_sizes(cls):
        return [576]

    @classmethod
    def is_mla(cls):
        return True

    @classmethod
    def supports_compute_capability(cls, capability):
        return capability.major in [9, 10]

    @classmethod
    def supports_combination(
        cls, head_size, dtype, kv_cache_dtype, block_size, use_mla, has_sink,
        use_sparse, use_mm_prefix, device_capability,
    ):
        if use_sparse:
            from vllm.v1.attention.ops.kernels import is_sparse_supported

            return is_sparse_supported()[1]
        from vllm.v1.attention.ops.kernels import is_dense_supported

        return is_dense_supported()[1]


class RoutedBackend(AttentionBackend):
    @classmethod
    def get_supported_head_sizes(cls):
        return [256, 512]

    @classmethod
    def supports_combination(
        cls, head_size, dtype, kv_cache_dtype, block_size, use_mla, has_sink,
        use_sparse, use_mm_prefix, device_capability,
    ):
        if head_size <= 256:
            return "the causal route requires the newer kernel"
        return None


class BlockBackend(AttentionBackend):
    @staticmethod
    def get_supported_kernel_block_sizes():
        return [16, 64, 128]

    @classmethod
    def supports_combination(
        cls, head_size, dtype, kv_cache_dtype, block_size, use_mla, has_sink,
        use_sparse, use_mm_prefix, device_capability,
    ):
        if block_size is not None and block_size % 64 != 0:
            return "the kernel needs a block size divisible by 64"
        return None


class KvBackend(AttentionBackend):
    supported_kv_cache_dtypes = ["auto", "fp8"]

    @classmethod
    def get_supported_head_sizes(cls):
        return [128, 512]

    @classmethod
    def supports_combination(
        cls, head_size, dtype, kv_cache_dtype, block_size, use_mla, has_sink,
        use_sparse, use_mm_prefix, device_capability,
    ):
        if kv_cache_dtype == "fp8" and head_size == 512:
            return "fp8 KV needs head size 128"
        return None


class AbsentBackend(AttentionBackend):
    @classmethod
    def supports_combination(
        cls, head_size, dtype, kv_cache_dtype, block_size, use_mla, has_sink,
        use_sparse, use_mm_prefix, device_capability,
    ):
        return "the kernel package is not installed"


class PlainBackend(AttentionBackend):
    @classmethod
    def supports_compute_capability(cls, capability):
        return capability.major >= 8


class ConfiguredBackend(AttentionBackend):
    @classmethod
    def get_supported_head_sizes(cls):
        return [128, 256]

    @classmethod
    def supports_combination(
        cls, head_size, dtype, kv_cache_dtype, block_size, use_mla, has_sink,
        use_sparse, use_mm_prefix, device_capability,
    ):
        from vllm.config import get_current_vllm_config_or_none

        version = 2
        config = get_current_vllm_config_or_none()
        if config is not None and config.attention_config.flash_attn_version is not None:
            version = config.attention_config.flash_attn_version
        if head_size > 128 and version != 4:
            return "head size 256 requires FlashAttention 4"
        return None
"""

#: the engine config that route reads, and its getter (no config is current while
#: the docs build)
CONFIG_FILES = {
    "vllm/config/__init__.py": (
        "from vllm.config.vllm import VllmConfig\n\n\n"
        "def get_current_vllm_config_or_none():\n    return None\n"
    ),
    "vllm/config/vllm.py": (
        "from pydantic import Field\n\nfrom .attention import AttentionConfig\n\n\n"
        "class VllmConfig:\n"
        "    attention_config: AttentionConfig = Field(default_factory=AttentionConfig)\n"
    ),
    "vllm/config/attention.py": (
        "from typing import Literal\n\n\n"
        "class AttentionConfig:\n    flash_attn_version: Literal[2, 3, 4] | None = None\n"
    ),
}

NAMES = {
    "DENSE_ATTN": "DenseBackend",
    "ROUTED_ATTN": "RoutedBackend",
    "BLOCK_ATTN": "BlockBackend",
    "KV_ATTN": "KvBackend",
    "ABSENT_ATTN": "AbsentBackend",
    "PLAIN_ATTN": "PlainBackend",
    "CONFIGURED_ATTN": "ConfiguredBackend",
}


def checked_interface() -> str:
    """The runtime test tree's interface with :data:`CHECK_SOURCE` (the full check)."""
    return dedent(RUNTIME_BACKEND_SOURCE).rstrip("\n") + "\n" + CHECK_SOURCE


def one_checked_tree(root: Path, name: str, module: str, cls: str, source: str) -> Path:
    """The runtime test tree, its interface with the full check, plus the backend
    ``name``: class ``cls`` of ``module`` (a path), whose code is ``source``."""
    entries = dict(DEFAULT_ENTRIES, **{name: f"{module[:-3].replace('/', '.')}.{cls}"})
    files = {REGISTRY: registry_source(entries), BACKEND_INTERFACE: checked_interface()}
    return runtime_tree(root, {**files, module: dedent(source)})


def accepts_tree(root: Path, *, with_check: bool = True) -> Path:
    """The runtime test tree plus :data:`NAMES`; ``with_check`` False: an interface
    without ``supports_combination`` (releases before it)."""
    module = MODULE[:-3].replace("/", ".")
    entries = dict(DEFAULT_ENTRIES, **{n: f"{module}.{c}" for n, c in NAMES.items()})
    interface = checked_interface() if with_check else dedent(RUNTIME_BACKEND_SOURCE)
    return runtime_tree(
        root,
        {
            REGISTRY: registry_source(entries),
            BACKEND_INTERFACE: interface,
            HELPERS: dedent(HELPERS_SOURCE),
            MODULE: dedent(BACKENDS_SOURCE),
            **CONFIG_FILES,
        },
    )
