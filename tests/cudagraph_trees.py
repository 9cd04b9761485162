"""A small tree whose metadata builders declare CUDA-graph support the ways vLLM
writes them (class attribute, classmethod returning it, classmethod reading the
engine config, a level the GPU decides at import, no builder at all)."""

from __future__ import annotations

from pathlib import Path

from runtime_trees import runtime_tree
from treebuilder import DEFAULT_ENTRIES, REGISTRY, dedent, registry_source

BUILDER = "vllm/v1/attention/builder.py"
MODULE = "vllm/v1/attention/backends/graphs.py"

BUILDER_SOURCE = """
import enum
from typing import ClassVar


class AttentionCGSupport(enum.Enum):
    ALWAYS = 3
    UNIFORM_BATCH = 2
    UNIFORM_SINGLE_TOKEN_DECODE = 1
    NEVER = 0


class AttentionMetadataBuilder:
    _cudagraph_support: ClassVar[AttentionCGSupport] = AttentionCGSupport.NEVER

    @classmethod
    def get_cudagraph_support(cls, vllm_config, kv_cache_spec):
        return cls._cudagraph_support
"""

BACKENDS_SOURCE = """
from typing import ClassVar

from vllm.v1.attention.backend import AttentionBackend
from vllm.v1.attention.backends.fa_utils import get_flash_attn_version
from vllm.v1.attention.builder import AttentionCGSupport, AttentionMetadataBuilder


class AttributeBuilder(AttentionMetadataBuilder):
    _cudagraph_support: ClassVar[AttentionCGSupport] = AttentionCGSupport.UNIFORM_BATCH


class MethodBuilder(AttentionMetadataBuilder):
    _cudagraph_support = AttentionCGSupport.ALWAYS

    @classmethod
    def get_cudagraph_support(cls, vllm_config, kv_cache_spec):
        del vllm_config, kv_cache_spec
        return cls._cudagraph_support


class ConfigBuilder(AttentionMetadataBuilder):
    _cudagraph_support = AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE

    @classmethod
    def get_cudagraph_support(cls, vllm_config, kv_cache_spec):
        spec_config = vllm_config.speculative_config
        if spec_config is not None and spec_config.num_speculative_tokens > 0:
            return AttentionCGSupport.UNIFORM_BATCH
        return cls._cudagraph_support


class SilentBuilder(AttentionMetadataBuilder):
    pass


class ImportTimeBuilder(AttentionMetadataBuilder):
    # decided when the module is imported, by the GPU (FlashAttention's version)
    _cudagraph_support = (
        AttentionCGSupport.ALWAYS
        if get_flash_attn_version() == 3
        else AttentionCGSupport.UNIFORM_BATCH
    )


class AttributeBackend(AttentionBackend):
    @staticmethod
    def get_builder_cls():
        return AttributeBuilder


class MethodBackend(AttentionBackend):
    @staticmethod
    def get_builder_cls():
        return MethodBuilder


class ConfigBackend(AttentionBackend):
    @staticmethod
    def get_builder_cls():
        return ConfigBuilder


class SilentBackend(AttentionBackend):
    @staticmethod
    def get_builder_cls():
        return SilentBuilder


class ImportTimeBackend(AttentionBackend):
    @staticmethod
    def get_builder_cls():
        return ImportTimeBuilder


class NoBuilderBackend(AttentionBackend):
    pass
"""

NAMES = {
    "ATTRIBUTE_ATTN": "AttributeBackend",
    "METHOD_ATTN": "MethodBackend",
    "CONFIG_ATTN": "ConfigBackend",
    "SILENT_ATTN": "SilentBackend",
    "NO_BUILDER_ATTN": "NoBuilderBackend",
    "IMPORT_TIME_ATTN": "ImportTimeBackend",
}


#: releases before ``get_cudagraph_support``: vLLM read the builder's attribute
OLD_BUILDER_SOURCE = BUILDER_SOURCE.split("\n    @classmethod")[0]


def cudagraph_tree(root: Path, *, old: bool = False) -> Path:
    """The runtime test tree plus the backends of :data:`NAMES` (``old``: the base
    builder has no ``get_cudagraph_support``)."""
    module = MODULE[:-3].replace("/", ".")
    entries = dict(DEFAULT_ENTRIES, **{n: f"{module}.{c}" for n, c in NAMES.items()})
    return runtime_tree(
        root,
        {
            REGISTRY: registry_source(entries),
            BUILDER: dedent(OLD_BUILDER_SOURCE if old else BUILDER_SOURCE),
            MODULE: dedent(BACKENDS_SOURCE),
        },
    )
