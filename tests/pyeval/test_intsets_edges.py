"""Edges of the head-size domain (pyeval/intsets.py, abstract.py) that a mutant of
its limits or its walk would change: the number of pieces a set may hold, the
members of a run that starts inside its period, how an abstract size is written."""

from __future__ import annotations

from itertools import islice

import pytest

from sphinxext_attn.pyeval.abstract import AbstractInt, Explorer
from sphinxext_attn.pyeval.intsets import MAX_MOD, MAX_RUNS, IntSet, Run, TooComplex, run


def test_a_set_holds_at_most_max_runs_pieces():
    kept = IntSet.points(range(1, 2 * MAX_RUNS, 2))
    assert len(kept.runs) == MAX_RUNS
    with pytest.raises(TooComplex, match=f"{MAX_RUNS + 1} separate pieces"):
        IntSet.points(range(1, 2 * MAX_RUNS + 2, 2))


def test_a_difference_cut_into_too_many_pieces_is_too_complex():
    cut = IntSet.points(range(2, 2 * MAX_RUNS - 1, 2))  # MAX_RUNS - 1 points
    assert len((IntSet.everything() - cut).runs) == MAX_RUNS
    with pytest.raises(TooComplex, match=f"{MAX_RUNS + 1} separate pieces"):
        IntSet.everything() - IntSet.points(range(2, 2 * MAX_RUNS + 1, 2))


def test_members_of_a_run_skip_the_residues_before_its_start():
    r = run(5, 30, 8, [1, 6])
    assert r == Run(6, 30, 8, frozenset({1, 6}))
    assert list(r.members()) == [6, 9, 14, 17, 22, 25, 30]
    assert list(islice(run(3, None, 4, [0, 1, 3]).members(), 5)) == [3, 4, 5, 7, 8]


def test_a_pattern_with_no_shorter_period_keeps_its_own():
    assert run(1, None, 12, [0, 5]) == Run(5, None, 12, frozenset({0, 5}))
    assert run(1, None, 12, [0, 4, 8]) == Run(4, None, 4, frozenset({0}))


def test_an_abstract_size_is_written_as_its_formula():
    explorer = Explorer([])
    assert repr(AbstractInt(explorer, 2, 3)) == "2*x+3"
    assert repr(AbstractInt(explorer, 1, -4, 8)) == "(1*x+-4) % 8"
    assert repr(AbstractInt(explorer, 5, 0, 0)) == "5*x+0"


def test_runs_with_a_common_period_of_max_mod_are_one_pattern():
    both = IntSet.of([run(1, None, MAX_MOD, [5]), run(1, None, MAX_MOD // 2, [7])])
    assert both.runs == (Run(5, None, MAX_MOD, frozenset({5, 7, MAX_MOD // 2 + 7})),)


def test_runs_whose_common_period_is_too_long_are_kept_apart():
    """Two runs ending alike are written as one pattern only when their common
    period is one the domain keeps (here a union whose pieces end up with periods
    whose lcm is above MAX_MOD): kept as separate runs, the set is still exact."""
    left = [run(227, None, 63, [38]), run(66, 4156, 3, [0, 1])]
    right = [run(225, None, 60, [12, 45]), run(299, None, 16, [11]), run(148, None, 4)]
    union = IntSet.of(left) | IntSet.of(right)
    # as written: pieces with a common period the domain keeps are one pattern
    assert [(r.lo, r.hi, r.mod) for r in union.runs] == [
        (66, 4156, 3),
        (152, 4148, 12),
        (227, 4133, 252),
        (299, 4091, 1008),
        (4139, 4139, 1),
        (4160, None, 1260),
        (4171, 4251, 16),
        (4267, None, 1008),
    ]
    parts = [r for r in left + right if r is not None]
    assert [x for x in range(1, 20_000) if x in union] == [
        x for x in range(1, 20_000) if any(x in r for r in parts)
    ]


def test_runs_meeting_at_one_size_share_it():
    """Two patterns whose ranges touch at a member of both meet in that one size
    (``hi == lo`` is still a run of one member, not empty)."""
    both = IntSet.of([run(1, 16, 8)]) & IntSet.of([run(16, None, 4)])
    assert both == IntSet.points([16]) and both.runs == (Run(16, 16, 1, frozenset({0})),)
    assert run(16, 16, 8, [0]) == Run(16, 16, 1, frozenset({0}))
    assert run(16, 16, 8, [1]) is None
