"""Runtime edges a sampled mutation run (seed 58) found unpinned, each test failing
with the mutant it was written for: the full check not asked when no dtype or no
attention type is left to try, the words of a condition allowing most values, an
unannotated parameter compared with numbers, and a block size list that allows any
size."""

from __future__ import annotations

import pytest
from accepts_trees import one_checked_tree
from runtime_trees import runtime_backend, runtime_tree
from treebuilder import CUDA, dedent, rows

from sphinxext_attn.analysis.pipeline import analyze
from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.runtime.priority_paths import Choice
from sphinxext_attn.runtime.priority_titles import _describe, evaluated_priorities
from sphinxext_attn.source.tree import SourceTree

CHECKED = """
from vllm.v1.attention.backend import AttentionBackend


class EdgeBackend(AttentionBackend):
{extra}
    @classmethod
    def get_supported_head_sizes(cls):
        return [128, 256]

    @classmethod
    def supports_combination(cls, head_size, *rest):
        if head_size == 256:
            return "head size 256 is refused"
        return None
"""

NO_DTYPE = "    supported_dtypes = []\n"
NO_KIND = "    @classmethod\n    def supports_attn_type(cls, attn_type):\n        return False\n"


@pytest.mark.parametrize("extra", [NO_DTYPE, NO_KIND], ids=["no-dtype", "no-attention-type"])
def test_no_dtype_or_no_attention_type_to_try_leaves_the_cells_unnarrowed(tmp_path, extra):
    """With no dtype (or no attention type) the check could be asked with, it is not
    asked: the head sizes stay as the method lists them, no note."""
    module = "vllm/v1/attention/backends/edge.py"
    source = CHECKED.replace("{extra}", extra)
    row = rows(
        analyze(one_checked_tree(tmp_path, "EDGE_ATTN", module, "EdgeBackend", source)),
        "EDGE_ATTN",
    )[0]
    assert row.supports["head_sizes"] == [128, 256]
    assert row.accepts["head_sizes"] == [128, 256]  # not narrowed
    assert "Head Sizes" not in row.notes


def test_with_a_dtype_and_an_attention_type_the_check_narrows(tmp_path):
    """The same class with both left to try: 256 is refused, so left out, with a note."""
    module = "vllm/v1/attention/backends/edge.py"
    source = CHECKED.replace("{extra}", "")
    row = rows(
        analyze(one_checked_tree(tmp_path, "EDGE_ATTN", module, "EdgeBackend", source)),
        "EDGE_ATTN",
    )[0]
    assert row.accepts["head_sizes"] == [128]
    assert 'answers "head size 256 is refused"' in row.notes["Head Sizes"]


def test_a_condition_on_most_values_names_the_others():
    """Fewer left out than allowed: "other than" the left-out ones; else the allowed."""
    kinds = [Choice(k, k) for k in ("auto", "fp8", "fp8_e4m3", "fp8_e5m2")]
    assert _describe("kv_cache_dtype", frozenset({0, 1, 2}), kinds) == (
        "KV cache other than fp8_e5m2"
    )
    assert _describe("kv_cache_dtype", frozenset({0}), kinds) == "KV cache auto"
    assert _describe("kv_cache_dtype", frozenset({0, 1}), kinds) == "KV cache auto, fp8"


UNANNOTATED = """
from vllm.v1.attention.backends.registry import AttentionBackendEnum as E


def _get_backend_priorities(use_mla: bool, num_heads):
    if num_heads <= 16:
        return [E.FLASHINFER, E.FLASH_ATTN]
    return [E.FLASH_ATTN]
"""


def test_an_unannotated_parameter_compared_with_numbers_is_tried_as_a_number(tmp_path):
    """No annotation, no default: the numbers it is compared with cut its values."""
    root = runtime_tree(tmp_path, {CUDA: dedent(UNANNOTATED)})
    found = evaluated_priorities(Interpreter(SourceTree(root), Machine()))
    standard = {p.conditions: p.backends for p in found if p.category == "standard"}
    assert standard == {
        "heads ≤ 16": ("FLASHINFER", "FLASH_ATTN"),
        "heads ≥ 17": ("FLASH_ATTN",),
    }


BLOCKS = """
@staticmethod
def get_supported_kernel_block_sizes():
    return {sizes}
"""


@pytest.mark.parametrize("sizes", ["[MultipleOf(1)]", "[MultipleOf(1), 16]"])
def test_a_block_size_step_of_one_is_any_size(tmp_path, sizes):
    header = "from vllm.v1.attention.backend import MultipleOf\n"
    runtime_backend(tmp_path, BLOCKS.format(sizes=sizes), header=header)
    row = rows(analyze(tmp_path), "MY_ATTN")[0]
    assert row.supports["block_sizes"] == "any"
