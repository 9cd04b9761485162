"""The CUDA Graphs answer where it is not a plain level (runtime/cudagraph.py, and the
builder's declared support of runtime/declared.py): a
``get_builder_cls`` that raises or returns no class, a builder that raises or
answers something that is no member of the support enum, one that reads the KV
cache spec further down, and one that reads the GPU but answers alike on each."""

from __future__ import annotations

import ast

import pytest
from cudagraph_trees import BUILDER, BUILDER_SOURCE
from runtime_trees import runtime_tree
from treebuilder import DEFAULT_ENTRIES, REGISTRY, dedent, registry_source

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.records import BackendFeatures
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.pyeval.values import NODE
from sphinxext_attn.runtime.cudagraph import cudagraph_support
from sphinxext_attn.runtime.declared import (
    NOT_DECLARED,
    _defined,
    builder_cudagraph,
    note_undeclared,
    undeclared,
)
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


@pytest.mark.parametrize(
    ("backend", "said"),
    [
        ("RaisingBackend", ""),
        ("NumberBackend", ""),
        ("TextBackend", f"{NOT_DECLARED} (TextBuilder)"),  # no plugin's class sets it
    ],
)
def test_the_builders_declared_support_is_read_only_from_a_builder_class(interp, backend, said):
    cls = interp.module_attr(interp.module(MODULE), backend, NODE)
    assert builder_cudagraph(interp, cls) == said


def test_a_class_of_no_plugin_leaves_nothing_undeclared(interp):
    cls = interp.module_attr(interp.module(MODULE), "TextBackend", NODE)
    assert undeclared(interp, cls, BackendFeatures("TEXT_ATTN", "x.TextBackend")) == {}


def test_the_names_a_class_body_defines():
    node = ast.parse(
        "class C:\n"
        "    def a(self): pass\n"
        "    async def b(self): pass\n"
        "    c = d = 1\n"
        "    e: int\n"
        "    obj.f = 2\n"
        "    obj.g: int = 3\n"
        "    if x:\n"
        "        h = 4\n"
    ).body[0]
    assert isinstance(node, ast.ClassDef)
    assert _defined(node) == {"a", "b", "c", "d", "e"}


def test_no_undeclared_cell_leaves_the_row_as_it_is():
    row = BackendFeatures("TEXT_ATTN", "x.TextBackend")
    row.notes["Dtypes"] = "a note"
    assert note_undeclared(row, {}) is row
    assert row.notes == {"Dtypes": "a note"} and not row.undeclared


def test_an_undeclared_cell_is_marked_with_what_vllm_assumes():
    row = BackendFeatures("TEXT_ATTN", "x.TextBackend")
    row.notes["Head Sizes"] = "kept"
    marked = note_undeclared(row, {"Dtypes": "fp16, bf16", "KV Dtypes": ""})
    assert marked is row and row.undeclared == {"Dtypes": "fp16, bf16", "KV Dtypes": ""}
    head = f"{NOT_DECLARED} by the plugin's class; vLLM then assumes its base class's answer: "
    assert row.notes["Dtypes"] == head + "fp16, bf16"
    assert row.notes["KV Dtypes"].startswith(head) and row.notes["KV Dtypes"] != head
    assert row.notes["Head Sizes"] == "kept"
