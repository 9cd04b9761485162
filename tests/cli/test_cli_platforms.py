"""``--platform`` on the page command and ``select``: vLLM's layout unchanged, the
platform's own section after it; decisions in the platform's terms."""

from __future__ import annotations

import json
import subprocess
import sys

from treebuilder import DEMO_TREE


def _cli(*args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "sphinxext_attn", *args, "--no-cache"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout


def test_page_keeps_vllm_layout_and_adds_the_platform_section():
    cuda = _cli("--root", str(DEMO_TREE), "-o", "-")
    for platform, heading, line in (
        ("xpu", "## Backend Selection (XPU)", "| 4 | `otherwise` | `FLASH_ATTN` |"),
        ("cpu", "## Backend Selection (CPU)", "| 3 | `otherwise` | `CPU_ATTN` |"),
        ("rocm", "## Backend Selection (ROCm)", "**gfx1100, gfx1201: with a KV connector:**"),
    ):
        page = _cli("--root", str(DEMO_TREE), "-o", "-", "--platform", platform)
        assert page.startswith(cuda.rstrip("\n"))
        section = page[len(cuda.rstrip("\n")) :]
        assert heading in section and line in section


def test_select_names_the_gpu_and_what_vllm_raises():
    text = _cli("select", "--root", str(DEMO_TREE), "--platform", "rocm", "--arch", "gfx1100")
    assert text.startswith("configuration: ROCm gfx1100, bf16")
    assert "selected: TRITON_ATTN" in text
    refused = json.loads(
        _cli("select", "--root", str(DEMO_TREE), "--platform", "cpu", "--mla", "--format", "json")
    )
    assert refused["selected"] is None
    assert refused["raised"] == "NotImplementedError: MLA is not supported on CPU."
    text = _cli("select", "--root", str(DEMO_TREE), "--platform", "cpu", "--mla")
    assert "selected: none (vLLM raises NotImplementedError: MLA is not supported on CPU.)" in text


def test_each_platform_asked_adds_its_selection_and_feature_tables():
    cuda = _cli("--root", str(DEMO_TREE), "-o", "-")
    page = _cli("--root", str(DEMO_TREE), "-o", "-", "--platform", "rocm,xpu")
    assert page.startswith(cuda.rstrip("\n"))
    rocm, xpu = page.split("## Backend Selection (XPU)")
    rocm = rocm.split("## Backend Selection (ROCm)")[1]
    assert "## Standard Attention (MHA, MQA, GQA) Backends (ROCm)" in rocm
    assert "| Attention Types | GPUs |" in rocm  # the capability in the platform's terms
    # the declared (inherited) list; the check the selection asks takes auto and fp8
    assert "| `ROCM_ATTN` | fp16, bf16 | `auto`, `float16`, `bfloat16` | 16, 32 | Any |" in rocm
    standard = rocm.split("## Standard Attention (MHA, MQA, GQA) Backends (ROCm)")[1]
    assert "§ `ROCM_ATTN` KV Dtypes: supports_kv_cache_dtype()" in standard
    assert "## MLA Decode Backends (ROCm)" in rocm and "`TRITON_MLA`" in rocm
    assert "CPU" not in xpu  # a platform not asked is not shown
    assert "| Attention Types | Compute Cap. |" in xpu
    assert "| `TRITON_ATTN` | fp16, bf16, fp32 |" in xpu and "| N/A |" in xpu
    every = _cli("--root", str(DEMO_TREE), "-o", "-", "--platform", "all")
    headings = [line for line in every.splitlines() if line.startswith("## Backend Selection")]
    assert headings == [f"## Backend Selection ({p})" for p in ("ROCm", "XPU", "CPU")]


def test_json_has_the_platforms_asked_and_none_by_default():
    plain = json.loads(_cli("--root", str(DEMO_TREE), "-o", "-", "--format", "json"))
    assert "platforms" not in plain
    data = json.loads(
        _cli("--root", str(DEMO_TREE), "-o", "-", "--format", "json", "--platform", "cpu")
    )
    assert {k: v for k, v in data.items() if k != "platforms"} == plain
    (cpu,) = data["platforms"]
    assert cpu["platform"] == "cpu" and cpu["lists"] == [] and cpu["gpus"] == {}
    assert cpu["rules"][-1] == {
        "when": [],
        "outcome": "CPU_ATTN",
        "line": cpu["rules"][-1]["line"],
    }
    assert [b["name"] for b in cpu["backends"]] == ["CPU_ATTN"]
    assert cpu["backends"][0]["compute_capability"] == "N/A"
    rocm = json.loads(
        _cli("--root", str(DEMO_TREE), "-o", "-", "--format", "json", "--platform", "rocm")
    )["platforms"][0]
    assert rocm["lists"] and all(
        set(p["gpus"]) <= {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"}
        for p in rocm["lists"]
    )
    assert all(b["supports"]["gpus"] for b in rocm["backends"])


def test_a_cuda_only_page_evaluates_no_other_platform(monkeypatch, tmp_path, capsys):
    import importlib

    cli = importlib.import_module("sphinxext_attn.cli.main")
    from sphinxext_attn.analysis import platform_part as platform_page

    def refuse(*args, **kwargs):
        raise AssertionError("another platform was evaluated for a CUDA-only page")

    monkeypatch.setattr(platform_page, "platform_analysis", refuse)
    out = tmp_path / "page.md"
    assert cli.main(["--root", str(DEMO_TREE), "-o", str(out), "--no-cache"]) == 0
    assert (
        cli.main(["--root", str(DEMO_TREE), "-o", str(out), "--no-cache", "--platform", "cuda"])
        == 0
    )
    page = ["--root", str(DEMO_TREE), "-o", str(out), "--no-cache", "--profile", "vllm-page"]
    assert cli.main([*page, "--platform", "rocm"]) == 0  # vLLM's page has no such section
    assert "has no section for rocm; none is added" in capsys.readouterr().err
    assert "Backend Selection (ROCm)" not in out.read_text(encoding="utf-8")


def test_a_bad_platform_is_one_line():
    proc = subprocess.run(
        [sys.executable, "-m", "sphinxext_attn", "--root", str(DEMO_TREE), "--platform", "metal"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "invalid platform 'metal' (choose from cuda, rocm, xpu, cpu, tpu" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
