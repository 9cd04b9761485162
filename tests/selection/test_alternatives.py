"""What would change a decision: each named fact the decision read, changed, and
decided again; only changes that give another outcome are listed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import vllm_trees

from sphinxext_attn.model.environment import Environment
from sphinxext_attn.render.select_text import describe
from sphinxext_attn.selection.alternatives import MAX_FACTS_FOR_PAIRS, alternatives


def _decide_by(table):
    """A decider answering from ``table``: (env, assume) settings -> selected."""

    def decide(environment: Environment) -> dict:
        key = (tuple(sorted(environment.env.items())), tuple(sorted(environment.assume.items())))
        return {"selected": table.get(key, "A"), "priorities": [], "rejected": {}}

    return decide


def test_only_changes_that_change_the_outcome_are_listed():
    decision = {
        "selected": "A",
        "assumptions": ["X_FLAG=unset", "Y_FLAG=unset", "installed.pkg=false", "arch=gfx942"],
    }
    table = {((("X_FLAG", "1"),), ()): "B"}  # Y_FLAG and the package change nothing
    found = alternatives(decision, Environment(), _decide_by(table))
    assert found == [{"env": {"X_FLAG": "1"}, "assume": {}, "option": {}, "selected": "B"}]
    assert describe(found[0]) == "with --env X_FLAG=1: B"


def test_two_facts_together_where_neither_alone_changes_it():
    decision = {"selected": "A", "assumptions": ["USE_IT=unset", "installed.pkg=false"]}
    table = {((("USE_IT", "1"),), (("installed.pkg", "true"),)): None}
    found = alternatives(decision, Environment(), _decide_by(table))
    assert found == [
        {
            "env": {"USE_IT": "1"},
            "assume": {"installed.pkg": "true"},
            "option": {},
            "selected": None,
        }
    ]
    assert describe(found[0]) == (
        "with --env USE_IT=1 --assume installed.pkg=true: none (vLLM raises)"
    )


# Equivalent mutants: in alternatives(), ``{c[:2] for c in pair} & changed`` is always
# empty where pairs are tried (they are tried only when no single change was found,
# so ``changed`` is empty): any change of that clause gives the same pairs.
def test_pairs_skip_two_values_of_one_option_and_go_on():
    """An option read at its default (None) has two other values: the pair of them is
    no change at all (skipped), and the pairs after it are still tried."""
    decision = {
        "selected": "A",
        "assumptions": ["cache.mode=default (None)", "USE_IT=unset", "installed.pkg=false"],
    }
    table = {((("USE_IT", "1"),), (("installed.pkg", "true"),)): "C"}
    seen = []

    def decide(environment: Environment) -> dict:
        seen.append(dict(environment.options))
        return _decide_by(table)(environment)

    found = alternatives(decision, Environment(), decide)
    assert found == [
        {
            "env": {"USE_IT": "1"},
            "assume": {"installed.pkg": "true"},
            "option": {},
            "selected": "C",
        }
    ]
    assert {"cache.mode": "true"} in seen and {"cache.mode": "false"} in seen
    assert len(seen) == 4 + 5  # each change alone, then every pair but the option's own


def test_past_six_facts_no_pair_is_tried():
    """Seven facts, none changing the outcome alone: no pair is decided (each pair is
    a whole decision), so a change only two of them make is not listed (``or`` ->
    ``and`` before the pairs tried them whenever nothing was found)."""
    names = [f"FLAG_{i}" for i in range(MAX_FACTS_FOR_PAIRS + 1)]
    decision = {"selected": "A", "assumptions": [f"{n}=unset" for n in names]}
    table = {(((names[0], "1"), (names[1], "1")), ()): "B"}
    asked = []

    def decide(environment: Environment) -> dict:
        asked.append(environment)
        return _decide_by(table)(environment)

    assert alternatives(decision, Environment(), decide) == []
    assert len(asked) == len(names)
    six = {"selected": "A", "assumptions": [f"{n}=unset" for n in names[:-1]]}
    assert [a["env"] for a in alternatives(six, Environment(), _decide_by(table))] == [
        {names[0]: "1", names[1]: "1"}
    ]


def test_no_alternative_for_an_answer_that_is_not_definite():
    decision = {"selected": None, "candidates": [{"backend": "A"}], "assumptions": ["X=unset"]}
    assert alternatives(decision, Environment(), _decide_by({})) == []


@pytest.mark.realtree
def test_without_the_cubin_every_changed_pick_names_the_cubin_alternative(tmp_path):
    """``select-0.33.0-cubin.json`` is vLLM with VLLM_HAS_FLASHINFER_CUBIN=1: asked
    without it, every case whose pick differs names that change with vLLM's pick,
    and every cubin alternative named gives vLLM's pick."""
    tree = vllm_trees.tree("0.33.0")
    path = vllm_trees.shared_dir() / "vllm" / "select" / "select-0.33.0-cubin.json"
    out = tmp_path / "results.json"
    subprocess.run(
        [sys.executable, "-m", "sphinxext_attn", "select", "--root", str(tree), "--cases",
         str(path), "-o", str(out), "--cache-dir", str(tmp_path / "cache")],
        check=True,
    )  # fmt: skip
    cases = json.loads(path.read_text(encoding="utf-8"))
    results = json.loads(out.read_text(encoding="utf-8"))
    differ = named = 0
    for case, result in zip(cases, results, strict=True):
        cubin = [
            a for a in result["alternatives"] if a["env"] == {"VLLM_HAS_FLASHINFER_CUBIN": "1"}
        ]
        for alternative in cubin:
            assert alternative["selected"] == case["selected"], case
        if result["selected"] != case["selected"]:
            differ += 1
            assert cubin, case
            named += 1
    assert differ == named and differ > 0
