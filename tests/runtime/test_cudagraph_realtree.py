"""The CUDA Graphs column of vLLM 0.33.0 against what its builders answered on the
reference machine (``../shared/vllm/truth/cudagraph-0.33.0.json``)."""

from __future__ import annotations

import json

import pytest
import vllm_trees
from known import assert_exactly

VERSION = "0.33.0"


@pytest.mark.realtree
def test_0_33_cudagraph_levels_match_the_truth():
    truth_file = vllm_trees.shared_dir() / "vllm" / "truth" / f"cudagraph-{VERSION}.json"
    truth = json.loads(truth_file.read_text())["backends"]
    analysis = vllm_trees.analysis(VERSION, profile="runtime")
    ours = {r.name: r.cudagraph for r in analysis.backends}
    assert set(truth) <= set(ours)
    differ = {name for name, said in truth.items() if ours[name].get("level") != said["cudagraph"]}
    assert_exactly(differ, "cudagraph", VERSION)
    # a difference is never a wrong level: it is an unknown saying what it depends on
    for name in differ:
        assert "level" not in ours[name] and ours[name]["unknown"].startswith("depends on"), name
    assert len(truth) - len(differ) == 36
