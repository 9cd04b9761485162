"""Edges of the memos and of argument binding a sampled mutation run (seed 57) found
unpinned: each test fails with the mutant it was written for."""

from __future__ import annotations

from typing import Any

from evaluator import HEADER, MODULE, cm, load

from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.pyeval.stmtmemo import sinks_of
from sphinxext_attn.pyeval.values import NODE


def call(it: Interpreter, cls: Any, name: str, *args: Any, cap: Any = (9, 0)) -> Any:
    it.capability = cap
    return it.call(it.getattr(cls, name, NODE, ""), list(args), {}, NODE, "")


def _lenient_checks(tmp_path: Any, source: str) -> tuple[Interpreter, Any]:
    """``source`` loaded, its ``checks`` run leniently (as a list of reasons)."""
    it, cls = load(tmp_path, source)
    it.lenient_functions = frozenset({"checks"})
    return it, cls


def test_sinks_are_the_distinct_lists_or_none():
    """Two names of one list are no pair of sinks (a replay would extend it twice)."""
    first: list[Any] = []
    second: list[Any] = []
    assert sinks_of(("a", "b"), {"a": first, "b": second}) == [first, second]
    assert sinks_of(("a", "b"), {"a": first, "b": first}) is None
    assert sinks_of(("a", "b"), {"a": first, "b": (1,)}) is None


ALIASED = cm(
    "checks",
    "reasons = []",
    "also = reasons",
    "if flag:",
    "    reasons.append('a'); also.append('b')",
    "return reasons",
    args="flag",
)


def test_a_list_appended_under_two_names_gets_each_item_once(tmp_path):
    it, cls = _lenient_checks(tmp_path, ALIASED)
    assert [call(it, cls, "checks", True) for _ in range(3)] == [["a", "b"]] * 3


READS_A_LIST = cm(
    "checks",
    "reasons = []",
    "sizes = [size]",
    "if 3 in sizes:",
    "    reasons.append('three')",
    "return reasons",
    args="size",
)


def test_a_check_reading_a_local_list_runs_again_for_its_items(tmp_path):
    """A list is no key part: the check is not replayed for another list."""
    it, cls = _lenient_checks(tmp_path, READS_A_LIST)
    answers = [call(it, cls, "checks", size) for size in (3, 4, 3, 4)]
    assert answers == [["three"], [], ["three"], []]


DEFAULTS = cm("pick", "return (a, b, c, d)", args="a, b, c=10, d=20")


def test_each_missing_argument_takes_its_own_default(tmp_path):
    it, cls = load(tmp_path, DEFAULTS)
    assert call(it, cls, "pick", 1, 2) == (1, 2, 10, 20)
    assert call(it, cls, "pick", 1, 2, 3) == (1, 2, 3, 20)


CACHED = """
import functools

RUNS = []


@functools.cache
def flag():
    RUNS.append(1)
    return os.getenv("MY_FLAG")
"""

RUNS_OF_FLAG = cm("runs", "return (flag(), len(RUNS))")


def test_a_cached_call_that_read_a_fact_but_no_gpu_runs_once_for_every_gpu(tmp_path):
    """It read no GPU, so its answer stands for every GPU: CPython's cache runs it
    once (a machine fact it read is the same for every GPU)."""
    it, cls = load(tmp_path, RUNS_OF_FLAG, header=HEADER + CACHED)
    answers = [call(it, cls, "runs", cap=cap) for cap in ((9, 0), (8, 0), (10, 0))]
    assert answers == [(None, 1)] * 3
    assert it.module_attr(it.module(MODULE), "RUNS", NODE) == [1]
