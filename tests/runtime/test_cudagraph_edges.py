"""The CUDA Graphs answer where it is not a plain level (runtime/cudagraph.py): a
``get_builder_cls`` that raises or returns no class, a builder that raises or
answers something that is no member of the support enum, one that reads the KV
cache spec further down, and one that reads the GPU but answers alike on each."""

from __future__ import annotations

import pytest
from cudagraph_trees import BUILDER, BUILDER_SOURCE
from treebuilder import DEFAULT_ENTRIES, REGISTRY, dedent, registry_source, runtime_tree

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.pyeval.values import NODE
from sphinxext_attn.runtime.cudagraph import cudagraph_support
from sphinxext_attn.source.tree import SourceTree

MODULE = "vllm.v1.attention.backends.odd_graphs"

SOURCE = """
from vllm.platforms import current_platform
from vllm.v1.attention.backend import AttentionBackend
from vllm.v1.attention.builder import AttentionCGSupport, AttentionMetadataBuilder


def _spec_level(spec):
    if spec.uses_paged_kv():
        return AttentionCGSupport.ALWAYS
    return AttentionCGSupport.NEVER


class RaisingBuilder(AttentionMetadataBuilder):
    @classmethod
    def get_cudagraph_support(cls, vllm_config, kv_cache_spec):
        raise ValueError("no graphs today")


class TextBuilder(AttentionMetadataBuilder):
    @classmethod
    def get_cudagraph_support(cls, vllm_config, kv_cache_spec):
        return "always"


class SpecBuilder(AttentionMetadataBuilder):
    @classmethod
    def get_cudagraph_support(cls, vllm_config, kv_cache_spec):
        return _spec_level(kv_cache_spec)


class SameOnEveryGpuBuilder(AttentionMetadataBuilder):
    @classmethod
    def get_cudagraph_support(cls, vllm_config, kv_cache_spec):
        if current_platform.is_device_capability_family(90):
            return AttentionCGSupport.UNIFORM_BATCH
        return AttentionCGSupport.UNIFORM_BATCH


class HopperTextBuilder(AttentionMetadataBuilder):
    @classmethod
    def get_cudagraph_support(cls, vllm_config, kv_cache_spec):
        if current_platform.is_device_capability_family(90):
            return "hopper"
        return AttentionCGSupport.ALWAYS


class HopperTextBackend(AttentionBackend):
    @staticmethod
    def get_builder_cls():
        return HopperTextBuilder


class RaisingBackend(AttentionBackend):
    @staticmethod
    def get_builder_cls():
        raise ValueError("no builder here")


class NumberBackend(AttentionBackend):
    @staticmethod
    def get_builder_cls():
        return 5



class RaisingBuilderBackend(AttentionBackend):
    @staticmethod
    def get_builder_cls():
        return RaisingBuilder


class TextBackend(AttentionBackend):
    @staticmethod
    def get_builder_cls():
        return TextBuilder


class SpecBackend(AttentionBackend):
    @staticmethod
    def get_builder_cls():
        return SpecBuilder


class SameBackend(AttentionBackend):
    @staticmethod
    def get_builder_cls():
        return SameOnEveryGpuBuilder
"""


@pytest.fixture(scope="module")
def interp(tmp_path_factory):
    root = runtime_tree(
        tmp_path_factory.mktemp("tree"),
        {
            REGISTRY: registry_source(dict(DEFAULT_ENTRIES)),
            BUILDER: dedent(BUILDER_SOURCE),
            MODULE.replace(".", "/") + ".py": dedent(SOURCE),
        },
    )
    return Interpreter(SourceTree(root), Machine())


@pytest.mark.parametrize(
    ("backend", "answer"),
    [
        ("RaisingBackend", {"unknown": "get_builder_cls() raises ValueError: no builder here"}),
        ("NumberBackend", {"unknown": "get_builder_cls() returns 5, not a class of the tree"}),
        ("RaisingBuilderBackend", {"unknown": "the builder raises ValueError: no graphs today"}),
        ("TextBackend", {"unknown": "not a member of the release's support enum: 'always'"}),
        ("SameBackend", {"level": "UNIFORM_BATCH"}),
        ("HopperTextBackend", {"unknown": "not a member of the release's support enum: 'hopper'"}),
    ],
)
def test_an_answer_that_is_no_level_says_why(interp, backend, answer):
    cls = interp.module_attr(interp.module(MODULE), backend, NODE)
    found = cudagraph_support(interp, cls)
    assert {k: v for k, v in found.items() if k != "assumptions"} == answer


def test_a_spec_read_further_down_is_named(interp):
    cls = interp.module_attr(interp.module(MODULE), "SpecBackend", NODE)
    why = cudagraph_support(interp, cls)["unknown"]
    assert why.startswith("depends on the layer's KV cache spec: "), why
    assert "kv_cache_spec.uses_paged_kv" in why
