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
