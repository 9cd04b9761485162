"""The CUDA Graphs column on a small tree written the way vLLM writes builders:
a class attribute, a classmethod returning it, a classmethod reading the engine
config (an unknown naming what it reads), and a builder that states nothing."""

from __future__ import annotations

import json
from pathlib import Path

from treebuilder import DEFAULT_ENTRIES, REGISTRY, dedent, registry_source, rows, runtime_tree

from sphinxext_attn.analysis.pipeline import analyze
from sphinxext_attn.render.jsonout import render_json

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


def _tree(root: Path) -> Path:
    module = MODULE[:-3].replace("/", ".")
    entries = dict(DEFAULT_ENTRIES, **{n: f"{module}.{c}" for n, c in NAMES.items()})
    return runtime_tree(
        root,
        {
            REGISTRY: registry_source(entries),
            BUILDER: dedent(BUILDER_SOURCE),
            MODULE: dedent(BACKENDS_SOURCE),
        },
    )


def test_levels_read_as_vllm_writes_builders(tmp_path):
    analysis = analyze(_tree(tmp_path))
    graphs = {n: rows(analysis, n)[0].cudagraph for n in NAMES}
    assert graphs["ATTRIBUTE_ATTN"] == {"level": "UNIFORM_BATCH"}
    assert graphs["METHOD_ATTN"] == {"level": "ALWAYS"}
    assert graphs["SILENT_ATTN"] == {"level": "NEVER"}  # the base builder's default
    why = graphs["CONFIG_ATTN"]["unknown"]
    assert "level" not in graphs["CONFIG_ATTN"]
    assert why.startswith("depends on the engine configuration (vllm_config.speculative_config)")
    assert "get_builder_cls" in graphs["NO_BUILDER_ATTN"]["unknown"]
    # the GPU decides at import: which level on which GPU, not one guessed machine's
    gpu = graphs["IMPORT_TIME_ATTN"]["unknown"]
    assert gpu.startswith("depends on the GPU: UNIFORM_BATCH on 7.0, ")
    assert gpu.endswith("; ALWAYS on 9.0")
    config = rows(analysis, "CONFIG_ATTN")[0]
    assert config.cell("CUDA Graphs") == "?"
    assert rows(analysis, "ATTRIBUTE_ATTN")[0].cell("CUDA Graphs") == "UNIFORM_BATCH"


def test_json_key_is_the_level_name_or_an_explicit_unknown(tmp_path):
    data = json.loads(render_json(analyze(_tree(tmp_path))))
    by_name = {b["name"]: b for b in data["backends"]}
    assert by_name["ATTRIBUTE_ATTN"]["cudagraph"] == "UNIFORM_BATCH"
    assert by_name["METHOD_ATTN"]["cudagraph"] == "ALWAYS"
    unknown = by_name["CONFIG_ATTN"]["cudagraph"]
    assert set(unknown) == {"unknown"} and "speculative_config" in unknown["unknown"]
    # the new key only: the other keys of a row keep their shape
    assert "CUDA Graphs" not in by_name["CONFIG_ATTN"]["unknown"]
    assert "CUDA Graphs" not in data["capability_columns"]


def test_the_page_profile_has_no_cudagraph_key(tmp_path):
    analysis = analyze(_tree(tmp_path), profile="vllm-page")
    data = json.loads(render_json(analysis))
    assert all("cudagraph" not in b for b in data["backends"])
    assert "CUDA Graphs" not in analysis.column_choices()
