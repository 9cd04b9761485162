"""The converters every way of giving a configuration goes through (select/inputs.py),
and how the conditions of a list are put in words."""

from __future__ import annotations

import pytest
import vllm_trees

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.runtime.priority_paths import Choice
from sphinxext_attn.runtime.priority_titles import _numbers
from sphinxext_attn.selection import inputs
from sphinxext_attn.selection.platform_lists import _factored


@pytest.mark.parametrize("good", ["9.0", "12.1", " 8.6 ", 10.0])
def test_a_capability_is_major_dot_minor(good):
    assert inputs.capability(good) == str(good).strip()


@pytest.mark.parametrize("bad", ["9", "9.", "100.0", "9.10", "sm90", "", None])
def test_anything_else_is_refused_with_the_value(bad):
    with pytest.raises(ValueError, match="is not a compute capability"):
        inputs.capability(bad)


def test_numbers_are_said_as_points_and_ranges():
    chosen = [
        Choice(64, "64", (64, 64)),
        Choice(80, "80", (65, 96)),
        Choice(128, "128", (128, 128)),
        Choice(None, "?"),
    ]
    assert _numbers(chosen) == ["unknown", "64-96", "128"]
    assert _numbers([Choice(1, "1", (float("-inf"), 7))]) == ["≤ 7"]
    assert _numbers([Choice(9, "9", (9, float("inf")))]) == ["≥ 9"]


def test_one_alternative_of_several_words_needs_no_parentheses():
    dims = {"a": [0, 1, 2], "b": [0, 1, 2]}
    one = [{"a": frozenset({1}), "b": frozenset({2})}]
    assert _factored(one, dims) == "a=1, b=2"
    anything = {"a": frozenset({0, 1, 2}), "b": frozenset({0, 1, 2})}
    assert _factored([*one, anything], dims) == "a=1, b=2"  # the other says nothing
    two = [*one, {"a": frozenset({2}), "b": frozenset({0})}]
    assert _factored(two, dims) == "(a=1, b=2) or (a=2, b=0)"


@pytest.mark.realtree
def test_the_backends_that_run_flash_attention_are_found_by_their_own_name():
    from sphinxext_attn.pyeval import Interpreter
    from sphinxext_attn.selection.fa_version import uses_flash_attn
    from sphinxext_attn.source.registry import read_registry
    from sphinxext_attn.source.tree import SourceTree

    tree = SourceTree(vllm_trees.tree("0.33.0"))
    interp = Interpreter(tree, Machine())
    found = [e.name for e in read_registry(tree) if uses_flash_attn(interp, e.name)]
    assert found == [
        "FLASH_ATTN",
        "FLASH_ATTN_DIFFKV",
        "TRITON_FLASH_ATTN",
        "FLASH_ATTN_MLA",
        "TURBOQUANT",
        "ULTRAQUANT",
    ]
