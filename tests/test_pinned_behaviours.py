"""Behaviours that plausible one-line mistakes would change with every other test
green (issue 39's table): each test here fails on that mistake."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pytest
import vllm_trees
from treebuilder import DEMO_TREE

from sphinxext_attn.cli.environment_flags import page_platforms
from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.selection import Config
from sphinxext_attn.page.priorities import read_priorities
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.pyeval.intsets import run
from sphinxext_attn.render.nodes import MAX_WIDTH, MIN_WIDTH, auto_widths
from sphinxext_attn.runtime.head_sizes import FEW, _run_items
from sphinxext_attn.runtime.kv_dtypes import ordered
from sphinxext_attn.selection.fa_version import flash_attn_version
from sphinxext_attn.source.tree import SourceTree


def test_a_platform_named_twice_is_one_section() -> None:
    args = argparse.Namespace(platform=[["rocm"], ["xpu", "rocm"], ["cuda"], ["xpu"]])
    assert page_platforms(args) == ["rocm", "xpu"]


def test_declared_kv_dtypes_the_release_does_not_list_are_kept_last() -> None:
    assert ordered(("fp8", "int8_custom", "auto"), ["auto", "bfloat16", "fp8"]) == [
        "auto",
        "fp8",
        "int8_custom",
    ]


def test_a_head_size_set_of_exactly_the_listing_limit_is_listed() -> None:
    at_limit = run(64, 64 * FEW, 64)
    assert _run_items(at_limit, ("x.py", 1)) == [64 * k for k in range(1, FEW + 1)]
    over = _run_items(run(64, 64 * (FEW + 1), 64), ("x.py", 1))
    assert over == [{"min": None, "max": 64 * (FEW + 1), "multiple_of": 64}]


def test_automatic_column_widths_are_capped() -> None:
    widths = auto_widths(["a", "b"], [["x" * 500, "y"]])
    assert widths == [MAX_WIDTH, MIN_WIDTH]


@pytest.mark.realtree
def test_priority_lists_blackwell_then_default_then_other_gpus() -> None:
    """0.33.0's lists in the page's order; SM 12's MLA list is titled SM 12, not SM 10."""
    found = read_priorities(SourceTree(vllm_trees.tree("0.33.0")))
    assert [(p.category, p.arch) for p in found] == [
        ("standard", "sm100"),
        ("standard", "default"),
        ("mla", "sm100"),
        ("mla", "default"),
        ("mla", "sm120"),
    ]


FA_VERSION = """def get_flash_attn_version(has_sinks: bool = False) -> int:
    device_capability = current_platform.get_device_capability()
    if has_sinks:
        return 4
    return 3 if (device_capability.major == 9 and current_platform.is_cuda()) else 2
"""


def test_the_flash_attention_version_is_asked_with_the_sinks_flag(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    shutil.copytree(DEMO_TREE, root)
    utils = root / "vllm" / "v1" / "attention" / "backends" / "fa_utils.py"
    text = utils.read_text(encoding="utf-8")
    start = text.index("def get_flash_attn_version")
    end = text.index("\n\n\n", start)
    utils.write_text(text[:start] + FA_VERSION.rstrip("\n") + text[end:], encoding="utf-8")
    backend = root / "vllm" / "v1" / "attention" / "backends" / "flash_attn.py"
    backend.write_text(
        backend.read_text(encoding="utf-8") + "\n# runs get_flash_attn_version's answer\n"
    )
    interp = Interpreter(SourceTree(root), Machine())
    plain = Config(capability="9.0", head_size=128)
    sinks = Config(capability="9.0", head_size=128, has_sink=True)
    assert flash_attn_version(interp, plain, "FLASH_ATTN") == 3
    assert flash_attn_version(interp, sinks, "FLASH_ATTN") == 4
