"""A backend asked for (``--backend NAME``): what the platform's own
``get_attn_backend_cls`` does with the request, on small trees written the way
vLLM writes it (CUDA checks the requested class; XPU's rules may ignore it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from request_trees import CUDA, request_tree

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.environment import environment_from
from sphinxext_attn.model.selection import Config, Decision
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.render.select_text import render_text
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.selection.requested import reasons_in
from sphinxext_attn.source.tree import SourceTree


def _tree(tmp_path: Path) -> Path:
    return request_tree(tmp_path / "tree")


def _selector(root: Path, platform: str = "cuda") -> Selector:
    env = environment_from(None, None, None, platform, "")
    return Selector(Interpreter(SourceTree(root), Machine(env)))


def test_a_request_the_class_accepts_is_used(tmp_path):
    selector = _selector(_tree(tmp_path))
    decision = selector.decide(Config(head_size=128, selected_backend="TRITON_ATTN"))
    assert (decision.selected, decision.requested, decision.ignored) == (
        "TRITON_ATTN",
        "TRITON_ATTN",
        False,
    )
    assert not decision.refused
    data = decision.to_json()
    assert data["selected_backend"] == "TRITON_ATTN"
    assert data["selected_backend_ignored"] is False
    assert "error" not in data


def test_a_refusal_gives_vllms_message_and_its_reasons_in_order(tmp_path):
    selector = _selector(_tree(tmp_path))
    decision = selector.decide(Config(head_size=100, dtype="fp32", selected_backend="FLASH_ATTN"))
    assert decision.selected is None
    assert not decision.candidates
    reasons = decision.rejected["FLASH_ATTN"]
    assert reasons[0] == "head_size not supported"
    assert decision.refused == (
        "ValueError: Selected backend AttentionBackendEnum.FLASH_ATTN is not valid for "
        f"this configuration. Reason: {reasons}"
    )
    data = decision.to_json()
    assert data["error"] == decision.refused
    again = Decision.from_json(data)
    assert (again.refused, again.error, again.requested) == (decision.refused, "", "FLASH_ATTN")
    text = render_text(Config(head_size=100), decision)
    assert "requested: FLASH_ATTN: vLLM refuses it:\n  - head_size not supported" in text


def test_the_automatic_choice_is_unchanged_without_a_request(tmp_path):
    selector = _selector(_tree(tmp_path))
    decision = selector.decide(Config(head_size=128))
    assert decision.requested is None
    assert "selected_backend" not in decision.to_json()
    assert decision.selected == decision.priorities[0]


@pytest.mark.parametrize(
    ("asked", "used", "ignored"),
    [
        ("TRITON_ATTN", "TRITON_ATTN", False),
        ("FLASH_ATTN", "FLASH_ATTN", False),
        ("FLASHINFER", "FLASH_ATTN", True),
        ("ROCM_ATTN", "FLASH_ATTN", True),  # the one used sorts before the one asked for
    ],
)
def test_xpu_rules_may_ignore_a_request(tmp_path, asked, used, ignored):
    """XPU's rules return another backend for a request they do not take: the
    answer says vLLM ignored it (the rules' own ``del`` of the argument runs)."""
    selector = _selector(_tree(tmp_path), "xpu")
    decision = selector.decide(Config(head_size=128, selected_backend=asked))
    assert (decision.selected, decision.ignored) == (used, ignored)
    text = render_text(Config(head_size=128), decision)
    if ignored:
        assert f"requested: {asked}: vLLM ignores the request and uses {used}" in text


def test_a_platform_refusal_without_reasons_keeps_its_message(tmp_path):
    selector = _selector(_tree(tmp_path), "xpu")
    decision = selector.decide(Config(head_size=576, use_mla=True, selected_backend="FLASHINFER"))
    assert decision.selected is None
    assert decision.refused == "ValueError: MLA is not supported on XPU: [576]"
    assert "FLASHINFER" not in decision.rejected  # a list of numbers is no list of reasons


def test_reasons_are_read_from_the_list_the_message_ends_with():
    assert reasons_in("ValueError: x. Reason: ['a b', \"c'd\"]") == ["a b", "c'd"]
    assert reasons_in("ValueError: x. Reason: [ImportError: no module]") is None
    assert reasons_in("ValueError: nothing listed") is None
    assert reasons_in("ValueError: head sizes [64, 128]") is None
    # a reason with brackets of its own (B12X's install hint): still the whole list
    hint = "Install the b12x backend with `pip install vllm[b12x]`"
    assert reasons_in(f"ValueError: x. Reason: ['block_size not supported', '{hint}']") == [
        "block_size not supported",
        hint,
    ]
    assert reasons_in("ValueError: see vllm[b12x]. Reason: ['a']") == ["a"]
    assert reasons_in("ValueError: x. Reason: ['a'].") == ["a"]


def _select(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sphinxext_attn", "select", "--no-cache", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_cli_backend_flag_alias_and_unknown_name(tmp_path):
    tree = _tree(tmp_path)
    done = _select("--root", str(tree), "--attention-backend", "TRITON_ATTN", "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["selected"], data["selected_backend"]) == ("TRITON_ATTN", "TRITON_ATTN")
    assert data["configuration"]["values"]["backend"] == "TRITON_ATTN"
    bad = _select("--root", str(tree), "--backend", "NOPE")
    assert bad.returncode == 2
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "argument --backend: 'NOPE' is not a backend of this release" in lines[0]
    assert lines[0].endswith(
        "choose from FLASH_ATTN, FLASHINFER, TRITON_ATTN, CPU_ATTN, ROCM_ATTN, "
        "FLASHMLA, TRITON_MLA, FLASHMLA_SPARSE, TORCH_SDPA, CUSTOM"
    )
    malformed = _select("--root", str(tree), "--backend", "no such")
    assert malformed.returncode == 2
    assert "'no such' is not a backend name" in malformed.stderr


def test_cases_read_selected_backend(tmp_path):
    tree = _tree(tmp_path)
    config = {"head_size": 100, "dtype": "bf16", "kv_cache_dtype": "auto", "block_size": None}
    cases = [
        {
            "config": config,
            "capability": "9.0",
            "selected_backend": "FLASH_ATTN",
            "selected": None,
            "error": "recorded",
            "selected_backend_ignored": False,
        },
        {"config": config, "capability": "9.0", "selected_backend": None},
    ]
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases), encoding="utf-8")
    done = _select("--root", str(tree), "--cases", str(path))
    assert done.returncode == 0, done.stderr
    first, second = json.loads(done.stdout)
    assert first["selected"] is None and first["rejected"]["FLASH_ATTN"]
    assert first["selected_backend"] == "FLASH_ATTN"
    assert "selected_backend" not in second
    cases[0]["selected_backend"] = "NOPE"
    path.write_text(json.dumps(cases), encoding="utf-8")
    bad = _select("--root", str(tree), "--cases", str(path))
    assert bad.returncode == 2
    assert "case 0: selected_backend: 'NOPE' is not a backend" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


@pytest.mark.realtree
def test_per_kind_requests_follow_the_releases_kind_of_the_layer():
    """0.34's ``backend_per_kind``: an MLA layer takes its kind's backend, as the
    release's get_attn_spec_kind maps it; other layers the global request."""
    import vllm_trees

    tree = str(vllm_trees.tree("0.34.0"))
    asked = ["--backend", "FLASH_ATTN", "--backend", "mla_attention=TRITON_MLA"]
    mla = _select("--root", tree, "--mla", "--head-size", "576", *asked, "--format", "json")
    assert mla.returncode == 0, mla.stderr
    data = json.loads(mla.stdout)
    assert (data["selected_backend"], data["configuration"]["values"]["kv_cache_kind"]) == (
        "TRITON_MLA",
        "mla_attention",
    )
    plain = _select("--root", tree, "--head-size", "128", *asked, "--format", "json")
    assert json.loads(plain.stdout)["selected_backend"] == "FLASH_ATTN"
    bad = _select("--root", tree, "--backend", "nope=TRITON_MLA")
    assert bad.returncode == 2
    assert "'nope' is not a KV-cache kind of this release; choose from full_attention" in (
        bad.stderr
    )
    old_tree = str(vllm_trees.tree("0.23.0"))
    old = _select("--root", old_tree, "--backend", "mla_attention=TRITON_MLA")
    assert old.returncode == 2 and "no per-kind backends" in old.stderr


def _misses(cases: list[dict], results: list[dict]) -> list[str]:
    """``INDEX BACKEND case|reasons`` where the answer is not vLLM's (as requestcmp
    scores: the backend used or a definite refusal, and a refusal's listed reasons)."""
    out: list[str] = []
    for index, (case, result) in enumerate(zip(cases, results, strict=True)):
        if case["selected"] == "unknown":
            continue
        want, asked = case["selected"], case.get("selected_backend")
        if want is not None:
            right = result.get("selected") == want
        else:
            right = result.get("selected") is None and not result.get("candidates")
        if not right:
            out.append(f"{index} {asked} case")
        listed = reasons_in(case.get("error") or "") if want is None and asked else None
        if listed is not None and (result.get("rejected") or {}).get(asked) != listed:
            out.append(f"{index} {asked} reasons")
    return out


@pytest.mark.realtree
@pytest.mark.parametrize("name", ["requested-0.33.0", "requested-rocm-0.33.0-gfx942"])
def test_vllms_recorded_requests(tmp_path, name):
    """Each of vLLM 0.33.0's recorded requests answered as vLLM did, but for the
    exact list of known differences (each rests on something outside the tree)."""
    import vllm_trees
    from known import assert_exactly

    path = vllm_trees.shared_dir() / "vllm" / "select" / f"{name}.json"
    out = tmp_path / "results.json"
    tree = str(vllm_trees.tree("0.33.0"))
    # the reference machine: its build lacked the FA4 cute-DSL modules (tests/selection/
    # test_case_files.py); its CPU took fp8 KV caches for CPU_ATTN (the recorded picks:
    # AMX tiles or AVX-512, whose OR CPU_ATTN asks; which one changes no answer here)
    build = (
        "--assume", "installed.vllm.vllm_flash_attn.cute=false",
        "--assume", "torch.cpu._is_amx_tile_supported=false",
        "--assume", "torch.cpu._is_avx512_supported=true",
    )  # fmt: skip
    done = _select("--root", tree, "--cases", str(path), "-o", str(out), *build)
    assert done.returncode == 0, done.stderr
    cases = json.loads(path.read_text(encoding="utf-8"))
    assert_exactly(_misses(cases, json.loads(out.read_text(encoding="utf-8"))), "requested", name)


@pytest.mark.realtree
def test_a_cpu_probe_on_cuda_is_answered_as_assumed():
    """CPU_ATTN on an fp8 KV cache asks the CPU (AMX tiles or AVX-512): on CUDA the
    recorded machine's CPU is not known, so the answer is conditional until the
    reader says (``--assume torch.cpu._is_avx512_supported=true``), then it is vLLM's."""
    import vllm_trees

    tree = str(vllm_trees.tree("0.33.0"))
    flags = ("--root", tree, "--capability", "12.0", "--head-size", "256", "--dtype", "bf16",
             "--kv-cache-dtype", "fp8_e5m2", "--block-size", "128", "--backend", "CPU_ATTN",
             "--format", "json")  # fmt: skip
    open_ = json.loads(_select(*flags).stdout)
    assert open_["selected"] is None and "CPU_ATTN" in open_["unknown"]
    facts = ("--assume", "torch.cpu._is_amx_tile_supported=false",
             "--assume", "torch.cpu._is_avx512_supported=true")  # fmt: skip
    settled = json.loads(_select(*flags, *facts).stdout)
    assert settled["selected"] == "CPU_ATTN"
    assert "torch.cpu._is_avx512_supported=true" in settled["assumptions"]
    refused = json.loads(
        _select(*flags, facts[0], facts[1], facts[2], facts[3][:-4] + "false").stdout
    )
    assert refused["selected"] is None and refused.get("refused")


def test_an_ignored_request_shows_the_list_vllm_walked_instead(tmp_path):
    """CUDA code that drops a request and chooses as usual: the answer is the automatic
    pick with the priority list vLLM walked for it."""
    tree = _tree(tmp_path)
    cuda = (tree / CUDA).read_text(encoding="utf-8")
    drop = (
        "        if selected_backend == AttentionBackendEnum.FLASHINFER:\n"
        "            selected_backend = None\n"
    )
    at = "        if selected_backend is not None:\n"
    (tree / CUDA).write_text(cuda.replace(at, drop + at, 1), encoding="utf-8")
    selector = _selector(tree)
    automatic = selector.decide(Config(head_size=128))
    assert len(automatic.priorities) > 1
    decision = selector.decide(Config(head_size=128, selected_backend="FLASHINFER"))
    assert (decision.selected, decision.ignored) == (automatic.selected, True)
    assert decision.priorities == automatic.priorities
