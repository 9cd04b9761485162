"""Edges of the selection code a sampled mutation run found unpinned, each test
failing with the mutant it was written for.

Mutant argued equivalent (no input tells it from the product):
- platform_lists._titled ``range(3)`` -> ``range(4)`` widening rounds: a round is a
  function of the conditions alone and the first round already reaches its fixed
  point (test_one_widening_round_reaches_the_fixed_point), so later rounds change nothing.
"""

from __future__ import annotations

import itertools
import random

from treebuilder import DEFAULT_ENTRIES, runtime_tree

from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.selection.platform_lists import _merge, _widened
from sphinxext_attn.selection.rule_requests import registry_names
from sphinxext_attn.selection.settled import conditional
from sphinxext_attn.source.tree import SourceTree


def test_a_join_of_no_answers_selects_nothing():
    """No answer to join (no value of the fact was asked): no candidate, no pick."""
    joined = conditional("installed.aiter", [])
    assert joined.selected is None and joined.candidates == []


def test_the_registry_names_are_its_members_in_order(tmp_path):
    root = runtime_tree(tmp_path / "with")
    assert registry_names(Interpreter(SourceTree(root))) == list(DEFAULT_ENTRIES)
    (tmp_path / "without" / "vllm").mkdir(parents=True)
    (tmp_path / "without" / "vllm" / "__init__.py").write_text("")
    assert registry_names(Interpreter(SourceTree(tmp_path / "without"))) == []


def test_one_widening_round_reaches_the_fixed_point():
    """The lists' conditions, widened and merged once, stay as they are when widened
    and merged again (point sets over 2-5 facts of 2-3 values)."""
    rng = random.Random(49)
    for _ in range(150):
        sizes = [rng.randint(2, 3) for _ in range(rng.randint(2, 5))]
        names = [f"f{i}" for i in range(len(sizes))]
        every = list(itertools.product(*(range(n) for n in sizes)))
        share = rng.choice((0.3, 0.5, 0.7))
        mine = {p for p in every if rng.random() < share} or {every[0]}
        start = [{n: frozenset({p[i]}) for i, n in enumerate(names)} for p in sorted(mine)]
        once = _merge(_widened(_merge(start), mine, names))
        assert _merge(_widened([dict(c) for c in once], mine, names)) == once
