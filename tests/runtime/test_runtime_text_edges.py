"""Edges of the runtime profile's text that a sampled mutation run found unpinned,
each test failing with the mutant it was written for."""

from __future__ import annotations

import pytest

from sphinxext_attn.pyeval import Unknown
from sphinxext_attn.pyeval.intsets import run
from sphinxext_attn.runtime.cell_text import _chains
from sphinxext_attn.runtime.head_sizes import _run_items
from sphinxext_attn.runtime.priority_paths import Choice
from sphinxext_attn.runtime.priority_titles import _numbers

WHERE = ("x.py", 1)


def test_a_span_inside_the_last_range_keeps_its_end():
    chosen = [Choice(1, "1", (1, 2)), Choice(5, "5", (5, 10)), Choice(6, "6", (6, 7))]
    assert _numbers(chosen) == ["1-2", "5-10"]
    touching = [Choice(1, "1", (1, 4)), Choice(5, "5", (5, 8)), Choice(None, "?", None)]
    assert _numbers(touching) == ["unknown", "1-8"]


def test_a_chain_may_step_by_the_smallest_size_when_no_gap_is_that_step():
    given = {32, 40, 64, 72, 96, 104}  # gaps 8 and 24; 32, 64, 96 step by 32
    assert ({"min": None, "max": 96, "multiple_of": 32}, {32, 64, 96}) in _chains(given)
    assert _chains({64}) == []  # one size: no chain


def test_remainders_that_are_a_union_of_multiples_are_said_as_rules():
    rules = _run_items(run(1, None, 6, (0, 2, 3, 4)), WHERE)
    assert rules == [
        {"min": None, "max": None, "multiple_of": 2},
        {"min": None, "max": None, "multiple_of": 3},
    ]
    with pytest.raises(Unknown, match=r"remainders \[0, 1\] of 6"):
        _run_items(run(1, None, 6, (0, 1)), WHERE)


# Equivalent mutant: in head_size_answer, ``not ask.last_read & CAPABILITY`` ->
# ``not ask.last_read | CAPABILITY`` (never re-raised) asks an unknown that read no
# GPU once per GPU instead, and each ask raises that same unknown: the same answer.


def test_sizes_that_fit_the_cell_are_listed_and_longer_ones_shortened():
    from sphinxext_attn.runtime.cell_text import MAX_CELL, head_size_text

    fits = [32 * k for k in range(1, 10)]
    assert len(", ".join(map(str, fits))) == MAX_CELL == 40
    assert head_size_text(fits) == tuple(map(str, fits))
    assert head_size_text([*fits, 320]) == ("%32, ≤320",)


def test_a_parameter_is_a_flag_only_where_it_is_tested_as_one():
    import ast

    from sphinxext_attn.runtime.priority_paths import _tested_as_flag

    assert _tested_as_flag(ast.parse("def f(x):\n    if x:\n        return 1"), "x")
    assert _tested_as_flag(ast.parse("def f(x, y):\n    return y and not x"), "x")
    assert not _tested_as_flag(ast.parse("def f(x):\n    return x + 1"), "x")
    assert not _tested_as_flag(ast.parse("def f(x, y):\n    if y:\n        return x"), "x")


def test_a_method_takes_as_many_arguments_as_it_binds(tmp_path):
    from evaluator import cm, load

    from sphinxext_attn.pyeval.values import NODE
    from sphinxext_attn.runtime.questions import takes

    it, cls = load(tmp_path, cm("m", "return a", args="a, b=1"))
    method = it.getattr(cls, "m", NODE, "")
    assert [takes(method, n) for n in range(4)] == [False, True, True, False]


def test_a_static_method_takes_as_many_arguments_as_it_declares(tmp_path):
    """No first argument is bound to a static method: each parameter is the caller's."""
    from evaluator import load

    from sphinxext_attn.pyeval.values import NODE
    from sphinxext_attn.runtime.questions import takes

    it, cls = load(tmp_path, "@staticmethod\ndef m(a, b=1):\n    return a\n")
    method = it.getattr(cls, "m", NODE, "")
    assert [takes(method, n) for n in range(4)] == [False, True, True, False]


def test_only_the_numbers_a_parameter_is_compared_with_are_its_own():
    import ast

    from sphinxext_attn.runtime.priority_paths import _compared_numbers

    body = ast.parse("def f(a, b):\n    if b > 3:\n        pass\n    if 7 > a:\n        pass\n")
    assert _compared_numbers(body, "a") == [7]
    assert _compared_numbers(body, "b") == [3]


def test_conditions_are_joined_only_where_they_differ_in_one_parameter():
    from sphinxext_attn.runtime.priority_titles import _merge

    one = [{"a": frozenset({0}), "b": frozenset({0})}, {"a": frozenset({1}), "b": frozenset({0})}]
    assert _merge(one) == [{"a": frozenset({0, 1}), "b": frozenset({0})}]
    two = [{"a": frozenset({0}), "b": frozenset({0})}, {"a": frozenset({1}), "b": frozenset({1})}]
    assert _merge([dict(c) for c in two]) == two
    same = [{"a": frozenset({0}), "b": frozenset({1})}] * 2
    assert _merge(list(same)) == same[:1]


def test_consecutive_sizes_stay_a_list():
    """Only multiples of a step above one are written as a rule (``%32, ≤320``); a run
    of consecutive sizes is no such rule and is listed as the sizes it is."""
    from sphinxext_attn.runtime.cell_text import head_size_text

    assert _chains(set(range(100, 112))) == []
    assert head_size_text(list(range(100, 112))) == tuple(map(str, range(100, 112)))


# Equivalent mutant: in Asker.method, ``interp.class_writes == key[1]`` -> ``is``: the
# count only grows, so it is the very object read into the key until a write replaces it
# with a larger number (never equal): ``is`` and ``==`` agree on every run.


# Equivalent mutants:
# - evaluated_priorities: the sort key of a group without GPUs ``(0, 0)`` -> ``(0, 1)``: a
#   group has no GPUs only when the function reads no capability, and then there is one
#   group (``[[0]]``): nothing to order, whichever pair stands in.
# - capability_points._from_call ``name == "DeviceCapability"`` -> ``is``: the name comes
#   from ast.parse, which interns identifiers, as CPython interns the identifier-like
#   literal: equal names are the same object.


def test_a_rule_of_head_sizes_is_tried_at_its_smallest_member():
    from sphinxext_attn.runtime.full_check import _head_values

    rules = [
        {"min": 40, "max": None, "multiple_of": 32},
        {"min": None, "max": 512, "multiple_of": 8},
        {"min": 72, "max": 96, "multiple_of": None},
    ]
    assert _head_values([80, *rules, 128]) == [128, 80, 64, 8, 72]
    assert _head_values("any") == [128]


def test_a_capability_asked_of_device_capability_is_a_pair_or_numbers():
    import ast

    from sphinxext_attn.runtime.capability_points import _from_call

    def found(text: str) -> set[tuple[int, int]]:
        call = ast.parse(text, mode="eval").body
        assert isinstance(call, ast.Call)
        return _from_call(call)

    assert found("current_platform.has_device_capability((9, 0))") == {(9, 0)}
    assert found("current_platform.has_device_capability(89)") == {(8, 9)}
    # two numbers that are no pair literal: each a capability of its own
    assert found("current_platform.has_device_capability([90, 100])") == {(9, 0), (10, 0)}


def test_kv_cache_dtypes_are_read_from_the_next_module_when_one_cannot_be_evaluated(
    tmp_path,
):
    from runtime_trees import runtime_tree

    from sphinxext_attn.pyeval import Interpreter
    from sphinxext_attn.runtime.questions import kv_cache_dtypes
    from sphinxext_attn.source.tree import SourceTree

    files = {
        "vllm/config/cache.py": "import outside_pkg\n\nCacheDType = outside_pkg.dtypes()\n",
        "vllm/config/__init__.py": (
            "from typing import Literal\n\nCacheDType = Literal['auto', 'fp8', 'fp8_e5m2']\n"
        ),
    }
    root = runtime_tree(tmp_path, files)
    assert kv_cache_dtypes(Interpreter(SourceTree(root))) == ("auto", "fp8", "fp8_e5m2")


def test_a_method_with_two_required_parameters_takes_no_fewer(tmp_path):
    """``m(cls, a, b, c=1)``: two required after the bound class, three at most."""
    from evaluator import cm, load

    from sphinxext_attn.pyeval.values import NODE
    from sphinxext_attn.runtime.questions import takes

    it, cls = load(tmp_path, cm("m", "return a", args="a, b, c=1"))
    method = it.getattr(cls, "m", NODE, "")
    assert [takes(method, n) for n in range(5)] == [False, False, True, True, False]


def test_a_keyword_only_parameter_binds_only_with_a_default(tmp_path):
    """``m(cls, a, *, k=1)`` takes one argument; ``m(cls, a, *, k)`` none."""
    from evaluator import cm, load

    from sphinxext_attn.pyeval.values import NODE
    from sphinxext_attn.runtime.questions import takes

    it, cls = load(
        tmp_path, cm("m", "return a", args="a, *, k=1") + cm("r", "return a", args="a, *, k")
    )
    assert takes(it.getattr(cls, "m", NODE, ""), 1)
    assert not takes(it.getattr(cls, "r", NODE, ""), 1)
