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

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.environment import case_environment, environment_from
from sphinxext_attn.model.selection import Config
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.selection.decision import Selector
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
    from sphinxext_attn.selection.platform_lists import named_archs, platform_priorities

    tree = SourceTree(DEMO_TREE)
    base = environment_from(platform="rocm")
    assert named_archs(tree, base) == ["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"]
    lists = {
        (p.arch, p.category, p.backends): p.conditions for p in platform_priorities(tree, base)
    }
    cdna, rdna = "gfx90a+gfx942+gfx950", "gfx1100+gfx1201"
    assert lists == {
        (cdna, "standard", ("ROCM_ATTN", "TRITON_ATTN")): "without a KV connector, and "
        "aiter not installed or VLLM_ROCM_USE_AITER=unset|0",
        (cdna, "standard", ("TRITON_ATTN",)): "with a KV connector, and aiter not installed "
        "or VLLM_ROCM_USE_AITER=unset|0",
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
    from sphinxext_attn.selection.platform_lists import platform_priorities

    base = environment_from(
        {"VLLM_ROCM_USE_AITER": "1"}, None, {"installed.aiter": "1"}, "rocm", "gfx942"
    )
    lists = [(p.backends, p.conditions) for p in platform_priorities(SourceTree(DEMO_TREE), base)]
    assert lists == [
        (("ROCM_ATTN", "FLASH_ATTN", "TRITON_ATTN"), "without a KV connector"),
        (("FLASH_ATTN", "TRITON_ATTN"), "with a KV connector"),
        (("TRITON_MLA",), ""),
    ]


def test_a_decision_on_whether_aiter_is_installed_is_made_both_ways():
    """Unset, aiter's presence is not guessed: the same pick holds either way, or the
    answer is conditional with each list."""
    selector = _selector(
        DEMO_TREE, platform="rocm", arch="gfx942", env={"VLLM_ROCM_USE_AITER": "1"}
    )
    same = selector.decide(Config(head_size=128))
    assert same.selected == "ROCM_ATTN"
    assert "installed.aiter=true|false" in same.assumptions
    assert [c["priorities"] for c in same.candidates] == [
        ["ROCM_ATTN", "FLASH_ATTN", "TRITON_ATTN"],
        ["ROCM_ATTN", "TRITON_ATTN"],
    ]
    differs = selector.decide(Config(head_size=128, use_kv_connector=True, kv_cache_dtype="auto"))
    picks = {c["backend"] for c in differs.candidates}
    assert picks == {"FLASH_ATTN", "TRITON_ATTN"}
    assert differs.selected is None
    assert differs.candidates[0]["if"] == "aiter is installed (--assume installed.aiter=true)"


def test_rules_of_xpu_and_cpu_read_as_written():
    """Every automatic rule in order; the explicit-request branches left out."""
    from sphinxext_attn.selection.platform_rules import read_rules

    rules = {}
    for platform in ("xpu", "cpu"):
        interp = Interpreter(SourceTree(DEMO_TREE), Machine(environment_from(platform=platform)))
        found, path = read_rules(interp, platform)
        rules[platform] = [(r.conditions, r.outcome) for r in found]
        assert path == f"vllm/platforms/{platform}.py"
    assert rules["xpu"] == [
        (("use_sparse",), "raises NotImplementedError: Sparse attention is not supported on XPU."),
        (("use_mla",), "TRITON_MLA"),
        (("dtype == torch.float32",), "TRITON_ATTN"),
        ((), "FLASH_ATTN"),
    ]
    assert rules["cpu"][0] == (
        ("use_mla",),
        "raises NotImplementedError: MLA is not supported on CPU.",
    )
    assert rules["cpu"][-1] == ((), "CPU_ATTN")


def test_requested_backend_branches_are_settled_by_none():
    import ast

    from sphinxext_attn.selection.platform_rules import _requested

    def settled(text):
        found = _requested(ast.parse(text, mode="eval").body)
        return found if isinstance(found, bool) else ast.unparse(found)

    assert settled("selected_backend == B.X") is False
    assert settled("selected_backend in (None, B.X) and dtype != 1") == "dtype != 1"
    assert settled("selected_backend not in (None, B.X)") is False
    assert settled("selected_backend and selected_backend != B.Y") is False
    assert settled("use_mla or selected_backend") == "use_mla"
    assert settled("not selected_backend") is True


def test_cpu_probes_are_facts_a_decision_is_made_both_ways_on():
    """``torch.cpu._is_*_supported()`` is a question to the hardware: assumed, or each
    answer's decision; ``platform.machine()`` is the reference machine's (x86_64)."""
    root = _cpu_probe_tree()
    unset = _selector(root, platform="cpu").decide(Config(kv_cache_dtype="fp8"))
    assert unset.selected is None
    assert [c["backend"] for c in unset.candidates] == ["CPU_ATTN", "none"]
    assert "torch.cpu._is_avx512_supported=true|false" in unset.assumptions
    assumed = _selector(
        root, platform="cpu", assume={"torch.cpu._is_avx512_supported": "true"}
    ).decide(Config(kv_cache_dtype="fp8"))
    assert assumed.selected == "CPU_ATTN"
    arm = _selector(root, platform="cpu", assume={"platform.machine": "aarch64"})
    assert arm.decide(Config()).selected == "TRITON_ATTN"
    assert (
        "platform.machine=x86_64" in _selector(root, platform="cpu").decide(Config()).assumptions
    )


def _cpu_probe_tree() -> Path:
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp()) / "tree"
    shutil.copytree(DEMO_TREE, root)
    (root / "vllm/platforms/cpu.py").write_text(
        """import platform

import torch

from vllm.platforms.interface import Platform, PlatformEnum
from vllm.v1.attention.backends.registry import AttentionBackendEnum


class CpuPlatform(Platform):
    _enum = PlatformEnum.CPU

    @classmethod
    def get_attn_backend_cls(cls, selected_backend, attn_selector_config, num_heads=None):
        if platform.machine() != "x86_64":
            return AttentionBackendEnum.TRITON_ATTN.get_path()
        if attn_selector_config.kv_cache_dtype == "fp8":
            if not torch.cpu._is_avx512_supported():
                raise ValueError("fp8 needs AVX-512")
        return AttentionBackendEnum.CPU_ATTN.get_path()
""",
        encoding="utf-8",
    )
    return root


FILES = {
    "gfx942": ("gfx942", {}, "false"),
    "gfx942-aiter": ("gfx942", {"VLLM_ROCM_USE_AITER": "1"}, "true"),
    "gfx1201-aiter": ("gfx1201", {"VLLM_ROCM_USE_AITER": "1"}, "true"),
    "gfx1100": ("gfx1100", {}, "false"),
}


@pytest.mark.realtree
@pytest.mark.parametrize("label", sorted(FILES))
def test_every_recorded_rocm_list_is_among_the_lists_of_its_machine(label):
    """The lists of one machine (arch, switches and aiter set as the file's) hold every
    list vLLM walked in its cases, each under its case's layer shape."""
    cases_file = SELECT / f"rocm-0.33.0-{label}.json"
    if not cases_file.is_file():
        vllm_trees.unavailable(f"no {cases_file}")
    from sphinxext_attn.selection.platform_lists import platform_priorities

    arch, env, installed = FILES[label]
    base = environment_from(env, None, {"installed.aiter": installed}, "rocm", arch)
    lists = platform_priorities(SourceTree(vllm_trees.tree("0.33.0")), base)
    produced = {p.backends for p in lists}
    recorded = {tuple(c["priorities"]) for c in json.loads(cases_file.read_text("utf-8"))}
    assert recorded <= produced
    # the others need a switch the file leaves unset (the AITER MHA or MLA one off)
    others = [p.conditions for p in lists if p.backends not in recorded]
    assert all("VLLM_ROCM_USE_AITER_M" in c for c in others)
    assert len(others) == (3 if label == "gfx942-aiter" else 0)
    assert {p.arch for p in lists} == {arch}


@pytest.mark.realtree
def test_the_gfx1201_swap_of_0_34_is_titled_by_its_kv_cache_exception():
    from sphinxext_attn.selection.platform_lists import platform_priorities

    base = environment_from(None, None, {"installed.aiter": "false"}, "rocm", "gfx1201")
    lists = platform_priorities(SourceTree(vllm_trees.tree("0.34.0")), base)
    titles = {p.backends[:2]: p.conditions for p in lists if p.category == "standard"}
    assert titles[("TRITON_ATTN", "ROCM_ATTN")].startswith("KV cache other than fp8_e5m2")
    assert titles[("ROCM_ATTN", "TRITON_ATTN")].startswith("KV cache fp8_e5m2")


@pytest.mark.realtree
def test_archs_the_release_names_are_gpus_its_code_derives_a_capability_for():
    from sphinxext_attn.selection.platform_lists import named_archs

    tree = SourceTree(vllm_trees.tree("0.33.0"))
    assert named_archs(tree, environment_from(platform="rocm")) == [
        "gfx90a",
        "gfx942",
        "gfx950",
        "gfx1100",
        "gfx1151",
        "gfx1200",
        "gfx1201",
        "gfx1250",
    ]


@pytest.mark.realtree
@pytest.mark.parametrize(
    ("platform", "config", "expected"),
    [
        ("xpu", Config(kv_cache_dtype="turboquant_k8v4"), "TURBOQUANT"),
        ("xpu", Config(use_sparse=True, use_mla=True, head_size=576), "XPU_MLA_SPARSE"),
        ("xpu", Config(use_mla=True, head_size=576), "FLASH_ATTN_MLA"),
        ("xpu", Config(use_mla=True, head_size=576, kv_cache_dtype="fp8_e5m2"), "TRITON_MLA"),
        ("xpu", Config(use_mm_prefix=True, head_size=256), "TRITON_FLASH_ATTN"),
        ("xpu", Config(use_mm_prefix=True, head_size=128), "TRITON_ATTN"),
        ("xpu", Config(dtype="fp32"), "TRITON_ATTN"),
        ("xpu", Config(), "FLASH_ATTN"),
        ("cpu", Config(use_sparse=True), "NotImplementedError: Sparse Attention"),
        ("cpu", Config(use_mla=True, head_size=576, kv_cache_dtype="fp8"), "ValueError: --kv"),
        ("cpu", Config(use_mla=True, head_size=576), ["AMX_MLA", "CPU_MLA"]),
        ("cpu", Config(kv_cache_dtype="fp8"), ["CPU_ATTN", "CPU_ATTN", "none"]),
        ("cpu", Config(), "CPU_ATTN"),
    ],
)
def test_every_rule_of_xpu_and_cpu_in_0_33(platform, config, expected):
    """Each automatic branch of 0.33's get_attn_backend_cls, reached by a configuration
    (XPU's batch-invariance branch: an environment variable, the test below)."""
    decision = _selector(vllm_trees.tree("0.33.0"), platform=platform).decide(config)
    if isinstance(expected, list):  # rests on a CPU ISA probe nobody set: both ways
        assert [c["backend"] for c in decision.candidates] == expected
    elif ":" in expected:
        assert decision.selected is None and decision.raised.startswith(expected)
    else:
        assert decision.selected == expected and not decision.error


@pytest.mark.realtree
def test_xpu_batch_invariance_rule_is_reached_through_the_environment():
    """vLLM's selector sets ``use_batch_invariant`` from ``VLLM_BATCH_INVARIANT`` (read
    as the tree's envs.py reads it): XPU's rule then picks TRITON_ATTN; unset or 0,
    the default stays and FLASH_ATTN is picked."""
    tree = vllm_trees.tree("0.33.0")
    picks = {
        value: _selector(
            tree, platform="xpu", env={"VLLM_BATCH_INVARIANT": value} if value else {}
        )
        .decide(Config())
        .selected
        for value in ("", "0", "1")
    }
    assert picks == {"": "FLASH_ATTN", "0": "FLASH_ATTN", "1": "TRITON_ATTN"}
    # a rule an unset variable leaves out of reach is still listed, in order
    from sphinxext_attn.selection.platform_rules import read_rules

    interp = Interpreter(SourceTree(tree), Machine(environment_from(platform="xpu")))
    outcomes = [(r.conditions[-1:], r.outcome) for r in read_rules(interp, "xpu")[0]]
    assert (("use_batch_invariant",), "TRITON_ATTN") in outcomes


@pytest.mark.realtree
@pytest.mark.parametrize(
    ("platform", "config", "assume", "expected"),
    [
        # fp32 skips the composite whatever the head size: TRITON_ATTN (not TRITON_FLASH_ATTN)
        ("xpu", Config(use_mm_prefix=True, head_size=256, dtype="fp32"), {}, "TRITON_ATTN"),
        # the AMX probe set: each side of the MLA rule, one pick
        (
            "cpu",
            Config(use_mla=True, head_size=576),
            {"torch.cpu._is_amx_tile_supported": "true"},
            "AMX_MLA",
        ),
        (
            "cpu",
            Config(use_mla=True, head_size=576),
            {"torch.cpu._is_amx_tile_supported": "false"},
            "CPU_MLA",
        ),
        ("cpu", Config(kv_cache_dtype=None), {}, "CPU_ATTN"),
    ],
)
def test_rules_of_0_33_with_the_machine_set(platform, config, assume, expected):
    """The sides of 0.33's rules the list above leaves to a probe or a default."""
    selector = _selector(vllm_trees.tree("0.33.0"), platform=platform, assume=assume)
    decision = selector.decide(config)
    assert (decision.selected, decision.candidates, decision.error) == (expected, [], "")
