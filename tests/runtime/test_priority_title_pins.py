"""The words of the priority lists' titles (runtime/priority_titles.py) where the
tests through whole trees left them loose: a GPU group's title, and how one
parameter's allowed values read; and a priority function whose look-up raises.

Mutants argued equivalent (no input tells them from the product):
- priority_titles._merge ``next(iter(a), None)`` -> ``None``: taken only when no
  parameter differs, so ``a[key] | b[key]`` is ``a[key]`` and ``joined`` stays
  ``dict(a)`` either way.
- priority_titles._lists_of ``len(grouped) == 1`` -> ``<= 1``: with no group the loop
  that reads it runs no time.
"""

from __future__ import annotations

from runtime_trees import runtime_tree
from treebuilder import CUDA

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.runtime.priority_paths import Choice
from sphinxext_attn.runtime.priority_titles import (
    _arch_title,
    _describe,
    safe_evaluated_priorities,
)
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.vocab.names import CAPABILITIES

GRID = list(CAPABILITIES)


def test_a_group_title_names_whole_families_of_more_than_one_gpu():
    """Every Ampere GPU of the grid is ``8.x``; 11.0, the only one of its family,
    is named as it is; part of a family is each GPU; the largest group is "Other"."""
    ampere = [(8, 0), (8, 6), (8, 7), (8, 9)]
    assert _arch_title("sm80", ampere, GRID) == "SM 8.x"
    assert _arch_title("sm110", [(11, 0)], GRID) == "SM 11.0"
    assert _arch_title("sm86+sm89", [(8, 6), (8, 9)], GRID) == "SM 8.6, 8.9"
    assert _arch_title("default", [(7, 5), *ampere], GRID) == "Other GPUs (SM 7.5, 8.x)"
    assert _arch_title("sm90", [(9, 0)], GRID) == "Hopper (SM 9.x)"
    assert _arch_title("sm100", [(10, 0), (10, 3)], GRID) == "Blackwell (SM 10.x)"


def test_values_read_as_a_list_unless_fewer_are_left_out():
    """Two of four names allowed: they are listed; three of four: "other than" the
    one left out."""
    choices = [Choice(n, repr(n)) for n in ("auto", "fp8", "bf16", "int8")]
    two = _describe("kv_cache_dtype", frozenset({0, 1}), choices)
    assert two == "KV cache 'auto', 'fp8'"
    three = _describe("kv_cache_dtype", frozenset({0, 1, 2}), choices)
    assert three == "KV cache other than 'int8'"


def test_a_flag_reads_in_words_and_an_unnamed_flag_by_its_name():
    flags = [Choice(True, "True"), Choice(False, "False")]
    assert _describe("use_sparse", frozenset({1}), flags) == "dense"
    assert _describe("has_sink", frozenset({0}), flags) == "with sinks"
    assert _describe("use_fp4", frozenset({0}), flags) == "use_fp4"
    assert _describe("use_fp4", frozenset({1}), flags) == "not use_fp4"


def test_numbers_but_one_read_as_not_that_one():
    """Head sizes split at 64 (``< 64``, ``64``, ``> 64``): all but 64 is "not 64";
    all but a range is the ranges left."""
    inf = float("inf")
    sizes = [
        Choice(32, "< 64", (-inf, 63)),
        Choice(64, "64", (64, 64)),
        Choice(80, "> 64", (65, inf)),
    ]
    assert _describe("head_size", frozenset({0, 2}), sizes) == "head size not 64"
    assert _describe("head_size", frozenset({0, 1}), sizes) == "head size ≤ 64"


def test_a_priority_function_whose_look_up_raises_is_unknown_with_the_exception(tmp_path):
    """The platform module names the function by an assignment that raises: no
    lists, and why, as ``kind: message``."""
    runtime_tree(tmp_path, {CUDA: '_get_backend_priorities = int("x")\n'})
    lists, why = safe_evaluated_priorities(Interpreter(SourceTree(tmp_path), Machine()))
    assert lists == []
    assert str(why) == "ValueError: invalid literal for int() with base 10: 'x'"
