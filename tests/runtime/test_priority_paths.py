"""Priority lists by condition: the release's priority function evaluated over the
values its conditions test, grouped per architecture and titled in words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import vllm_trees
from runtime_trees import runtime_tree
from treebuilder import CUDA, dedent

from sphinxext_attn.analysis.pipeline import analyze
from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.runtime.priority_titles import evaluated_priorities
from sphinxext_attn.source.tree import SourceTree

PRIORITIES = """
from vllm.v1.attention.backends.registry import AttentionBackendEnum as E
from vllm.platforms.interface import DeviceCapability


def _get_backend_priorities(
    use_mla: bool,
    device_capability: DeviceCapability,
    num_heads: int | None = None,
    use_mm_prefix: bool = False,
):
    if use_mla:
        if device_capability.major == 12:
            return [E.TRITON_MLA]
        tail = [E.FLASHINFER] if num_heads is not None and num_heads <= 16 else []
        return [E.TRITON_MLA, *tail]
    if device_capability.major == 9 and use_mm_prefix:
        return [E.TRITON_ATTN, E.FLASH_ATTN]
    return [E.FLASH_ATTN, E.TRITON_ATTN]
"""


def lists(root: Path) -> list:
    return evaluated_priorities(Interpreter(SourceTree(root), Machine()))


def titles(found: list, category: str) -> dict[str, tuple[str, ...]]:
    return {p.title: p.backends for p in found if p.category == category}


def test_every_distinct_list_with_its_conditions(tmp_path: Path) -> None:
    found = lists(runtime_tree(tmp_path, {CUDA: dedent(PRIORITIES)}))
    standard = titles(found, "standard")
    assert standard == {
        "Other GPUs (SM 7.x, 8.x, 10.x, 11.0, 12.x)": ("FLASH_ATTN", "TRITON_ATTN"),
        "Hopper (SM 9.x): without a multimodal prefix": ("FLASH_ATTN", "TRITON_ATTN"),
        "Hopper (SM 9.x): with a multimodal prefix": ("TRITON_ATTN", "FLASH_ATTN"),
    }
    mla = titles(found, "mla")
    assert mla["Other GPUs (SM 7.x, 8.x, 9.0, 10.x, 11.0): heads ≤ 16"] == (
        "TRITON_MLA",
        "FLASHINFER",
    )
    assert mla["Other GPUs (SM 7.x, 8.x, 9.0, 10.x, 11.0): heads unknown or ≥ 17"] == (
        "TRITON_MLA",
    )
    assert mla["SM 12.x"] == ("TRITON_MLA",)
    assert {p.arch for p in found if p.category == "mla"} == {"default", "sm120"}
    sm90 = [p for p in found if p.arch == "sm90"]
    assert sm90 and all(p.capabilities == ("9.0",) for p in sm90)
    # each list links to the return that produced it
    assert {p.source.line for p in sm90} == {17, 18}


def test_runtime_analysis_uses_the_evaluated_lists(tmp_path: Path) -> None:
    root = runtime_tree(tmp_path, {CUDA: dedent(PRIORITIES)})
    runtime = analyze(root)
    assert "sm90" in runtime.arches()
    assert len(runtime.priority_lists("standard")) == 3
    page = analyze(root, profile="vllm-page")
    assert all(not p.arch_title for p in page.priorities)


def test_a_function_that_cannot_be_evaluated_keeps_the_literal_lists(tmp_path: Path) -> None:
    source = PRIORITIES.replace(
        "    if use_mla:\n", "    if use_mla:\n        torch.cuda.synchronize()\n", 1
    )
    root = runtime_tree(tmp_path, {CUDA: dedent(source)})
    result = analyze(root)
    assert result.priorities and not any(p.arch_title for p in result.priorities)
    notes = [d for d in result.diagnostics if "priority lists not evaluated" in d.message]
    assert len(notes) == 1 and notes[0].location.path == CUDA
    assert notes[0].release  # how the release is written, not a hostile body


@pytest.mark.realtree
@pytest.mark.parametrize("version", ["0.16.0", "0.23.0", "0.33.0"])
def test_every_list_vllm_returns_is_shown(version: str) -> None:
    """Each list vLLM's function returned on the truth grid is one of ours."""
    truth_file = vllm_trees.SHARED / "vllm" / "truth" / f"truth-{version}.json"
    if not truth_file.exists():
        vllm_trees.unavailable(f"no truth file {truth_file}")
    truth = json.loads(truth_file.read_text())["priorities"]
    found = lists(vllm_trees.tree(version))
    ours = {p.backends for p in found}
    theirs = {tuple(case["priorities"]) for case in truth}
    assert theirs <= ours
    if version == "0.33.0":
        assert len(ours) == 10
        assert {p.arch for p in found} == {"default", "sm90", "sm100", "sm120"}
        sm120 = [p for p in found if p.category == "mla" and p.arch == "sm120"]
        assert sm120[0].backends == ("TRITON_MLA", "FLASHINFER_MLA_SPARSE_SM120")


def _standard_lists(tmp_path: Path, branches: str) -> list[tuple[str, tuple[str, ...]]]:
    """The standard lists (arch, backends) of the test priorities with ``branches``
    (source lines) before their last ``return``."""
    last = "    return [E.FLASH_ATTN, E.TRITON_ATTN]"
    source = dedent(PRIORITIES).replace(last, branches + last)
    found = lists(runtime_tree(tmp_path, {CUDA: source}))
    return [(p.arch, p.backends) for p in found if p.category == "standard"]


def test_the_default_lists_come_first_then_each_group_by_its_first_gpu(tmp_path: Path) -> None:
    """Groups of GPUs that interleave (7.x with 12.x, 8.x with 10.x) are ordered by
    their first GPU, the largest (default) first.

    Equivalent mutants: dropping the first-GPU part of the sort key (or making it a
    constant) changes nothing, since ``_arches`` already yields the groups in grid
    order, by first GPU, and the sort is stable."""
    standard = _standard_lists(
        tmp_path,
        "    if device_capability.major in (7, 12):\n"
        "        return [E.FLASHINFER]\n"
        "    if device_capability.major in (8, 10):\n"
        "        return [E.TRITON_ATTN]\n",
    )
    assert standard == [
        ("default", ("FLASHINFER",)),
        ("default", ("TRITON_ATTN",)),
        ("sm90", ("FLASH_ATTN", "TRITON_ATTN")),
        ("sm90", ("TRITON_ATTN", "FLASH_ATTN")),
        ("sm110", ("FLASH_ATTN", "TRITON_ATTN")),
    ]


@pytest.mark.parametrize("constants", [[], [16], [8, 10], [5, 6], [-3, -1, 0, 2], [1, 3, 4, 9]])
def test_every_integer_is_tried_in_exactly_one_region(constants: list[int]) -> None:
    """The regions the constants cut the integers into tile them, a single integer
    between two constants (9 between 8 and 10) included, and each is named by it."""
    from sphinxext_attn.runtime.priority_paths import _number_choices

    choices = _number_choices(constants, optional=False)
    for n in range(-20, 41):
        assert sum(c.span[0] <= n <= c.span[1] for c in choices) == 1, n
    for c in choices:
        if c.span[0] == c.span[1]:
            assert c.label == str(c.value)


def test_a_single_integer_between_two_constants_has_its_list(tmp_path: Path) -> None:
    source = (
        "from vllm.v1.attention.backends.registry import AttentionBackendEnum as E\n\n\n"
        "def _get_backend_priorities(num_heads: int):\n"
        "    if 8 < num_heads < 10:\n"
        "        return [E.FLASHINFER]\n"
        "    return [E.FLASH_ATTN]\n"
    )
    found = {p.backends: p.conditions for p in lists(runtime_tree(tmp_path, {CUDA: source}))}
    assert found == {("FLASHINFER",): "heads 9", ("FLASH_ATTN",): "heads not 9"}


def test_a_default_group_comes_before_a_named_group_with_an_earlier_gpu(tmp_path: Path) -> None:
    """10.x with 12.x, two families, is a "default" group whose first GPU (10.0)
    comes after Hopper's (9.0): the default groups still lead, then sm90, sm110."""
    standard = _standard_lists(
        tmp_path,
        "    if device_capability.major == 11:\n"
        "        return [E.FLASHINFER]\n"
        "    if device_capability.major in (10, 12):\n"
        "        return [E.TRITON_ATTN]\n",
    )
    assert standard == [
        ("default", ("FLASH_ATTN", "TRITON_ATTN")),
        ("default", ("TRITON_ATTN",)),
        ("sm90", ("FLASH_ATTN", "TRITON_ATTN")),
        ("sm90", ("TRITON_ATTN", "FLASH_ATTN")),
        ("sm110", ("FLASHINFER",)),
    ]
