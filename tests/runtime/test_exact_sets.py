"""Head sizes as exact sets on real releases: every row's ``supports.head_sizes``
against what each class accepts for every size from 1 to 2048 (the shared
``truth-exact`` file), and cells short enough for a docs page."""

from __future__ import annotations

import json
from typing import Any

import head_size_items
import pytest
import vllm_trees

from sphinxext_attn.analysis.pipeline import analyze

pytestmark = pytest.mark.realtree

SIZES = range(1, 2049)
#: Rows whose head sizes depend on the machine (the FlashAttention version): not scored,
#: as the truth file's README says; their variant rows keep vLLM's reading.
MACHINE_DEPENDENT = {"FLASH_ATTN"}
#: Backends (by registry name) whose exact set we do not give yet, and why.
KNOWN_MISMATCHES: dict[str, str] = {}
#: The layout budget of a Head Sizes cell.
LONGEST_CELL = 40


def expand(items: Any) -> set[int] | None:
    return head_size_items.expand(items, SIZES)


@pytest.fixture(scope="module")
def runtime_033() -> Any:
    return analyze(vllm_trees.tree("0.33.0"))


def test_0_33_head_sizes_are_the_exact_sets(runtime_033: Any) -> None:
    path = vllm_trees.shared_dir() / "vllm" / "truth" / "truth-exact-0.33.0.json"
    if not path.is_file():
        vllm_trees.unavailable(f"{path} not present")
    truth = json.loads(path.read_text())["backends"]
    ours: dict[str, set[int] | None] = {}
    for row in runtime_033.backends:
        got = None if "Head Sizes" in row.unknown else expand(row.supports.get("head_sizes"))
        before = ours.get(row.name, set())
        ours[row.name] = None if got is None or before is None else before | got
    wrong = {}
    for name, answer in truth.items():
        if name in MACHINE_DEPENDENT or "error" in answer or name not in ours:
            continue
        if not isinstance(answer.get("head_sizes"), list):
            continue
        if ours[name] != set(answer["head_sizes"]):
            wrong[name] = sorted(ours[name] or [])[:8]
    assert set(wrong) == set(KNOWN_MISMATCHES), wrong
    assert {"TRITON_ATTN", "FLASH_ATTN_DIFFKV", "CPU_ATTN"} <= set(ours)


def test_0_33_cells_state_the_rules(runtime_033: Any) -> None:
    cells = {r.name: r.cell("Head Sizes") for r in runtime_033.backends}
    assert cells["TRITON_ATTN"] == "≥32"
    assert cells["FLASH_ATTN_DIFFKV"] == "%8, ≤512"
    assert cells["CPU_ATTN"] == "%32, ≤256 or 80, 112, 512"
    assert cells["FLASHMLA"] == "320, 512, 576"
    (triton,) = [r for r in runtime_033.backends if r.name == "TRITON_ATTN"]
    assert triton.supports["head_sizes"] == [{"min": 32, "max": None, "multiple_of": None}]


@pytest.mark.parametrize("version", ["0.16.0", "0.20.0", "0.23.0", "0.33.0"])
def test_head_size_cells_fit_a_docs_column(version: str) -> None:
    analysis = analyze(vllm_trees.tree(version))
    long = {r.name: r.cell("Head Sizes") for r in analysis.backends}
    long = {n: c for n, c in long.items() if len(c) > LONGEST_CELL}
    assert long == {}
    unknown = [r.name for r in analysis.backends if "Head Sizes" in r.unknown]
    assert unknown == []


def test_block_sizes_are_sorted_and_each_once() -> None:
    from sphinxext_attn.runtime.questions import sorted_block_labels

    assert sorted_block_labels(["128", "64"]) == ["64", "128"]
    assert sorted_block_labels(["32", "%16", "16"]) == ["%16"]
    assert sorted_block_labels(["%32", "%16"]) == ["%16"]
    assert sorted_block_labels(["64", "%128", "16"]) == ["16", "64", "%128"]
