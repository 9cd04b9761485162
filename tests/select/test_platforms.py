"""Selection on ROCm, XPU and CPU: the platform class its detection plugin names,
the GPU amdsmi reports (ROCm), and the platform's own rules (XPU, CPU).

The demo tree (docs/_demo_tree) has small invented platforms of each shape."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import vllm_trees
from treebuilder import DEMO_TREE

from sphinxext_attn.model.environment import case_environment, environment_from
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.pyeval.machine import Machine
from sphinxext_attn.select.decision import Config, Selector
from sphinxext_attn.source.tree import SourceTree

SELECT = Path(__file__).resolve().parents[2] / ".." / "shared" / "vllm" / "select"


def _selector(root: Path, **environment: object) -> Selector:
    env = environment_from(
        environment.get("env"),  # type: ignore[arg-type]
        environment.get("options"),  # type: ignore[arg-type]
        environment.get("assume"),  # type: ignore[arg-type]
        str(environment.get("platform", "cuda")),
        str(environment.get("arch", "")),
    )
    return Selector(Interpreter(SourceTree(root), Machine(env)))


@pytest.mark.parametrize(
    ("arch", "aiter", "installed", "priorities", "capability"),
    [
        ("gfx942", "0", "true", ["ROCM_ATTN", "TRITON_ATTN"], (9, 4)),
        ("gfx942", "1", "true", ["ROCM_ATTN", "FLASH_ATTN", "TRITON_ATTN"], (9, 4)),
        ("gfx942", "1", "false", ["ROCM_ATTN", "TRITON_ATTN"], (9, 4)),
        ("gfx90a", "1", "true", ["ROCM_ATTN", "FLASH_ATTN", "TRITON_ATTN"], (9, 0)),
        ("gfx1100", "1", "true", ["TRITON_ATTN", "ROCM_ATTN"], (11, 0)),
    ],
)
def test_rocm_list_follows_arch_switch_and_package(arch, aiter, installed, priorities, capability):
    """The arch is what amdsmi reports (through the tree's own decorator), the
    capability what the platform's code derives from it (a regex of the tree)."""
    selector = _selector(
        DEMO_TREE,
        platform="rocm",
        arch=arch,
        env={"VLLM_ROCM_USE_AITER": aiter},
        assume={"installed.aiter": installed},
    )
    decision = selector.decide(Config(head_size=128, kv_cache_dtype="auto"))
    assert decision.priorities == priorities
    assert decision.selected == priorities[0]
    assert selector.gpu(Config(capability="7.0")) == capability
    assert f"arch={arch}" in decision.assumptions
    assert f"installed.aiter={installed}" in decision.assumptions


def test_rocm_kv_connector_drops_a_backend():
    selector = _selector(
        DEMO_TREE, platform="rocm", arch="gfx942", assume={"installed.aiter": "0"}
    )
    decision = selector.decide(Config(head_size=128, use_kv_connector=True))
    assert decision.priorities == ["TRITON_ATTN"]


@pytest.mark.parametrize(
    ("platform", "config", "selected", "raised"),
    [
        ("xpu", Config(), "FLASH_ATTN", ""),
        ("xpu", Config(dtype="fp32"), "TRITON_ATTN", ""),
        ("xpu", Config(use_mla=True, head_size=576), "TRITON_MLA", ""),
        ("xpu", Config(use_sparse=True), None, "NotImplementedError: Sparse attention"),
        ("cpu", Config(), "CPU_ATTN", ""),
        ("cpu", Config(kv_cache_dtype=None), "CPU_ATTN", ""),
        ("cpu", Config(use_mla=True), None, "NotImplementedError: MLA is not supported"),
        ("cpu", Config(kv_cache_dtype="fp8"), None, "ValueError: --kv-cache-dtype fp8"),
    ],
)
def test_every_branch_of_the_rules_of_a_platform_without_a_list(
    platform, config, selected, raised
):
    decision = _selector(DEMO_TREE, platform=platform).decide(config)
    assert decision.selected == selected
    assert decision.raised.startswith(raised)
    assert decision.priorities == ([selected] if selected else [])


def test_case_keys_reach_the_code():
    """``model_attn_type`` is the model config's attn_type (an engine option),
    ``aiter_installed`` the installed.aiter fact."""
    case = {"platform": "rocm", "arch": "gfx942", "aiter_installed": False}
    case["model_attn_type"] = "encoder_decoder"
    env = case_environment(case, environment_from(), 0)
    assert env.options == {"model_config.attn_type": "encoder_decoder"}
    assert env.assume == {"installed.aiter": "0"}
    assert (env.platform, env.arch) == ("rocm", "gfx942")


@pytest.mark.realtree
@pytest.mark.parametrize("label", ["gfx942", "gfx942-aiter", "gfx1201-aiter", "gfx1100"])
def test_rocm_cases_of_0_33_all_match(label, tmp_path):
    """Every recorded ROCm case of 0.33.0: the pick and the list (no known mismatch)."""
    cases_file = SELECT / f"rocm-0.33.0-{label}.json"
    if not cases_file.is_file():
        vllm_trees.unavailable(f"no {cases_file}")
    tree = vllm_trees.tree("0.33.0")
    out = tmp_path / "out.json"
    subprocess.run(
        [sys.executable, "-m", "sphinxext_attn", "select", "--root", str(tree), "--no-cache"]
        + ["--cases", str(cases_file), "-o", str(out)],
        check=True,
    )
    cases = json.loads(cases_file.read_text(encoding="utf-8"))
    results = json.loads(out.read_text(encoding="utf-8"))
    mismatched = [
        i
        for i, (case, got) in enumerate(zip(cases, results, strict=True))
        if (case["selected"], case["priorities"]) != (got["selected"], got["priorities"])
    ]
    assert mismatched == []


def test_rocm_lists_of_the_demo_every_list_with_its_conditions():
    """Every list the demo's ROCm code walks, per group of GPUs that behave alike:
    the machine facts (aiter installed, VLLM_ROCM_USE_AITER) are explored where read."""
    from sphinxext_attn.select.platform_lists import named_archs, platform_priorities

    tree = SourceTree(DEMO_TREE)
    base = environment_from(platform="rocm")
    assert named_archs(tree, base) == ["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"]
    lists = {
        (p.arch, p.category, p.backends): p.conditions for p in platform_priorities(tree, base)
    }
    cdna, rdna = "gfx90a+gfx942+gfx950", "gfx1100+gfx1201"
    assert lists == {
        (cdna, "standard", ("ROCM_ATTN", "TRITON_ATTN")): "aiter not installed, without a KV "
        "connector or without a KV connector, VLLM_ROCM_USE_AITER=unset|0",
        (cdna, "standard", ("TRITON_ATTN",)): "aiter not installed, with a KV connector or "
        "with a KV connector, VLLM_ROCM_USE_AITER=unset|0",
        (cdna, "standard", ("ROCM_ATTN", "FLASH_ATTN", "TRITON_ATTN")): "aiter installed, "
        "without a KV connector, VLLM_ROCM_USE_AITER=1",
        (cdna, "standard", ("FLASH_ATTN", "TRITON_ATTN")): "aiter installed, with a KV "
        "connector, VLLM_ROCM_USE_AITER=1",
        (cdna, "mla", ("TRITON_MLA",)): "",
        (rdna, "standard", ("TRITON_ATTN", "ROCM_ATTN")): "without a KV connector",
        (rdna, "standard", ("TRITON_ATTN",)): "with a KV connector",
        (rdna, "mla", ("TRITON_MLA",)): "",
    }


def test_rocm_lists_of_one_arch_and_a_set_switch_are_not_explored_over_it():
    from sphinxext_attn.select.platform_lists import platform_priorities

    base = environment_from(
        {"VLLM_ROCM_USE_AITER": "1"}, None, {"installed.aiter": "1"}, "rocm", "gfx942"
    )
    lists = [(p.backends, p.conditions) for p in platform_priorities(SourceTree(DEMO_TREE), base)]
    assert lists == [
        (("ROCM_ATTN", "FLASH_ATTN", "TRITON_ATTN"), "without a KV connector"),
        (("FLASH_ATTN", "TRITON_ATTN"), "with a KV connector"),
        (("TRITON_MLA",), ""),
    ]
