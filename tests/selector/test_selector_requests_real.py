"""The selector's answer for a backend asked for is ``select --backend``'s, on vLLM
0.33.0: every request of the release's recorded cases (CUDA, and ROCm on gfx942;
XPU and CPU: a sample)
read back from the page's table (:func:`predict_request`, as the widget reads it)
and compared with the command line's decision: its text (request line and
reasons), the backend used and vLLM's message. Builds two tables with their
requests (about two minutes)."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from typing import Any

import pytest
import vllm_trees
from known import assert_exactly

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.environment import Environment
from sphinxext_attn.model.selection import Config, Decision, request_summary
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.selection.requested import backend_names
from sphinxext_attn.selector.grid import GRID
from sphinxext_attn.selector.predict import sample_configs
from sphinxext_attn.selector.requests import predict_request
from sphinxext_attn.selector.variants import build_variant
from sphinxext_attn.source.tree import SourceTree

pytestmark = [pytest.mark.realtree, pytest.mark.slow]


def _said(decision: Decision | None) -> Any:
    assert decision is not None
    picks = [(c["backend"], c["if"]) for c in decision.candidates]
    return request_summary(decision), decision.selected, decision.refused, picks


@pytest.mark.parametrize(
    ("name", "platform", "arch"),
    [("requested-0.33.0", "cuda", ""), ("requested-rocm-0.33.0-gfx942", "rocm", "gfx942")],
)
def test_the_widgets_answer_is_select_backends(
    source_tree_033: SourceTree, name: str, platform: str, arch: str
) -> None:
    environment = Environment(platform=platform, arch=arch)
    table = json.loads(
        json.dumps(build_variant(source_tree_033, environment, (platform, arch), True))
    )
    path = vllm_trees.shared_dir() / "vllm" / "select" / f"{name}.json"
    cases = json.loads(path.read_text(encoding="utf-8"))
    tree = SourceTree(str(vllm_trees.tree("0.33.0")))
    selector = Selector(Interpreter(tree, Machine(environment)))  # as select --cases asks
    differ = []
    compared = 0
    for index, case in enumerate(cases):
        asked = case.get("selected_backend")
        if not asked:
            continue
        config = Config.from_case(case)
        if platform != "cuda":  # the GPU is the arch's (the table's one capability)
            config.capability = next(iter(table["caps"]))
        truth = Decision.from_json(selector.explain(selector.decide(config)).to_json())
        compared += 1
        if _said(predict_request(table, config, asked)) != _said(truth):
            differ.append(f"{index} {asked}")
    assert compared >= 250
    assert_exactly(differ, "selector-requests", name)


@pytest.mark.parametrize("platform", ["xpu", "cpu"])
def test_rule_platforms_answer_as_select_does(source_tree_033: SourceTree, platform: str) -> None:
    """XPU's and CPU's rules (which ignore some requests and raise on others): 150
    sampled configurations, each asking a name drawn from the release's, read back
    from the page's table as select answers them."""
    environment = Environment(platform=platform)
    built = build_variant(source_tree_033, environment, (platform, ""), True)
    table = json.loads(json.dumps(built))
    selector = Selector(Interpreter(source_tree_033, Machine(environment)))
    names = backend_names(selector.interp)
    pick = random.Random(7)
    cap = next(iter(table["caps"]))
    kinds = set()
    for config in sample_configs(GRID, 150, 11):
        asked = pick.choice(names)
        config = replace(config, capability=cap, selected_backend=asked)
        truth = Decision.from_json(selector.explain(selector.decide(config)).to_json())
        assert _said(predict_request(table, config, asked)) == _said(truth), config
        kinds.add("refused" if truth.refused else "ignored" if truth.ignored else "other")
    assert {"refused", "ignored"} <= kinds
