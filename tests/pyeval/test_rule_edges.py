"""The edges of the evaluator's rules, where a slightly different rule would answer
differently: the size limit of a slice assignment, the complement of a bounded
set, which tree functions stand for the engine config."""

from __future__ import annotations

from evaluator import our_answer

from sphinxext_attn.pyeval.intsets import IntSet, run


def test_a_slice_assignment_may_fill_a_list_up_to_the_limit_and_no_further(tmp_path):
    full = our_answer(tmp_path / "a", "", ["x = []", "x[0:0] = range(100_000)", "return len(x)"])
    assert full == ("ok", 100_000)
    over = our_answer(tmp_path / "b", "", ["x = [1]", "x[0:0] = range(100_000)", "return len(x)"])
    assert over[0] == "unknown" and over[1].startswith("sequence too long to evaluate")


def test_the_complement_of_a_bounded_run_starts_right_after_it():
    inside = IntSet.of([run(4, 10)])
    outside = inside.complement()
    assert [x in outside for x in (1, 3, 4, 10, 11, 12)] == [True, True, False, False, True, True]
    assert outside.first() == 1 and (outside & IntSet.of([run(5, None)])).first() == 11


def test_only_the_config_getters_stand_for_the_engine_config(tmp_path):
    """A tree function beside ``VllmConfig`` whose name is not a config getter runs."""
    prelude = (
        "class VllmConfig:\n    pass\n\n"
        "def get_current_vllm_config():\n    return VllmConfig()\n\n"
        "def helper():\n    return 5\n\n"
        "def another_helper():\n    return 6\n"
    )
    assert our_answer(tmp_path / "a", prelude, ["return helper()"]) == ("ok", 5)
    assert our_answer(tmp_path / "b", prelude, ["return another_helper()"]) == ("ok", 6)
