"""The docs' bundled demo tree is evaluable like a release: the runtime profile
answers every cell, the priority function gives lists by condition, selection
decides with vLLM-style reasons, and the literal (vllm-page) reading differs
from what the code answers where the demo was written to make it differ."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import vllm_trees
from treebuilder import DEMO_OLD_TREE, DEMO_TREE, REPO

from sphinxext_attn.analysis.pipeline import analyze
from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.columns import FEATURE_COLUMNS
from sphinxext_attn.model.records import TABLES, Analysis
from sphinxext_attn.model.selection import Config
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.source.tree import SourceTree

PRIORITY_HEADING = "## Backend Priority (CUDA)"


@pytest.fixture(scope="module")
def runtime() -> Analysis:
    return analyze(DEMO_TREE)


@pytest.fixture(scope="module")
def page() -> Analysis:
    return analyze(DEMO_TREE, profile="vllm-page")


@pytest.fixture(scope="module")
def selector() -> Selector:
    return Selector(Interpreter(SourceTree(DEMO_TREE), Machine()))


def _cells(analysis: Analysis) -> dict[tuple[str, str, str], str]:
    """(backend, version, column) -> cell text, over every feature table."""
    return {
        (row.name, row.version, column): row.cell(column)
        for table in TABLES
        for row in analysis.rows(table)
        for column in FEATURE_COLUMNS
        if column not in ("Backend", "Version")
    }


@pytest.mark.parametrize("root", [DEMO_TREE, DEMO_OLD_TREE], ids=["demo", "demo-old"])
def test_every_cell_is_evaluated(root: Path) -> None:
    analysis = analyze(root)
    assert analysis.diagnostics == []
    rows = [row for table in TABLES for row in analysis.rows(table)]
    assert len(rows) >= 8
    assert {row.name: row.unknown for row in rows if row.unknown} == {}
    # the priority lists are the evaluated ones (each with its architecture's title)
    assert analysis.priorities and all(p.arch_title for p in analysis.priorities)


def test_json_has_no_unknown_cells(tmp_path: Path) -> None:
    out = tmp_path / "demo.json"
    subprocess.run(
        [sys.executable, "-m", "sphinxext_attn", "--root", str(DEMO_TREE), "--format", "json"]
        + ["-o", str(out)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["diagnostics"] == []
    for backend in data["backends"]:
        assert backend["unknown"] == {}, backend["name"]
        assert "supports" in backend


def test_several_priority_lists_for_one_architecture(runtime: Analysis) -> None:
    by_arch: dict[tuple[str, str], list[tuple[str, tuple[str, ...]]]] = {}
    for p in runtime.priorities:
        by_arch.setdefault((p.category, p.arch), []).append((p.conditions, p.backends))
    # the standard lists of every GPU but Blackwell depend on a multimodal prefix
    standard = dict(by_arch[("standard", "default")])
    assert standard == {
        "without a multimodal prefix": ("FLASH_ATTN", "FLASHINFER", "TRITON_ATTN"),
        "with a multimodal prefix": ("FLASH_ATTN", "TRITON_ATTN"),
    }
    # Blackwell's MLA list depends on the head count
    mla = dict(by_arch[("mla", "sm100")])
    assert len(mla) == 2
    assert mla["heads ≤ 16"][0] == "TRITON_MLA"
    assert by_arch[("standard", "sm100")] == [("", ("FLASHINFER", "FLASH_ATTN", "TRITON_ATTN"))]


def test_page_profile_reads_the_literal_lists(page: Analysis) -> None:
    """vLLM's generator sees neither condition: the Blackwell MLA list is built in a
    variable, and FlashInfer's entry on other GPUs is a conditional one."""
    lists = {(p.category, p.arch): p.backends for p in page.priorities}
    assert lists == {
        ("standard", "sm100"): ("FLASHINFER", "FLASH_ATTN", "TRITON_ATTN"),
        ("standard", "default"): ("FLASH_ATTN", "TRITON_ATTN"),
        ("mla", "default"): ("FLASHMLA", "TRITON_MLA"),
    }


def test_selection_picks_the_first_valid_backend(selector: Selector) -> None:
    decision = selector.decide(Config(capability="9.0", dtype="bf16", head_size=128))
    assert decision.error == "" and decision.unknown == {}
    assert decision.selected == "FLASH_ATTN"
    assert decision.priorities == ["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN"]
    assert decision.rejected == {}


def test_selection_rejects_with_reasons(selector: Selector) -> None:
    decision = selector.explain(
        selector.decide(Config(capability="8.0", dtype="bf16", head_size=576, use_mla=True))
    )
    assert decision.selected == "TRITON_MLA"
    assert decision.rejected == {"FLASHMLA": ["compute capability not supported"]}
    # the reason is located where the demo's backend interface states it
    assert decision.sources["FLASHMLA"][0].startswith("vllm/v1/attention/backend.py:")

    mm = selector.decide(Config(capability="9.0", head_size=128, use_mm_prefix=True))
    assert mm.selected == "TRITON_ATTN"
    assert mm.priorities == ["FLASH_ATTN", "TRITON_ATTN"]
    assert mm.rejected == {"FLASH_ATTN": ["multimodal prefix attention not supported"]}

    few_heads = selector.decide(
        Config(capability="10.0", dtype="bf16", head_size=576, use_mla=True, num_heads=8)
    )
    assert few_heads.priorities[0] == "TRITON_MLA" and few_heads.selected == "TRITON_MLA"


def test_no_backend_qualifies(selector: Selector) -> None:
    decision = selector.decide(Config(capability="7.0", dtype="fp32", head_size=1000))
    assert decision.selected is None
    assert decision.rejected["FLASH_ATTN"] == [
        "head_size not supported",
        "dtype not supported",
        "compute capability not supported",
    ]
    assert decision.rejected["TRITON_ATTN"] == ["head_size not supported"]


def test_profiles_differ_where_the_demo_says(runtime: Analysis, page: Analysis) -> None:
    """KV dtypes inherited from a base (in another file, or the interface's defaults),
    head sizes and attention types decided by a method, a compute capability check
    through a method, DCP answered by the impl class: the literal reading misses each
    of them, and reads everything else the demo declares literally alike."""
    ours, theirs = _cells(runtime), _cells(page)
    assert ours.keys() == theirs.keys()
    differ = {k: (theirs[k], ours[k]) for k in ours if ours[k] != theirs[k]}
    assert differ == {
        ("CPU_ATTN", "", "KV Dtypes"): ("auto", "auto, float16, bfloat16"),
        ("TRITON_ATTN", "", "Head Sizes"): ("Any", "%32, ≤256"),
        ("TRITON_ATTN", "", "Attention Types"): ("Decoder", "Decoder, Encoder, Encoder Only"),
        ("FLASHMLA", "", "Head Sizes"): ("Any", "576"),
        ("FLASHMLA", "", "Compute Cap."): ("Any", "9.x, 10.x"),
        ("TRITON_MLA", "", "KV Dtypes"): ("auto", "auto, fp8"),
        ("TRITON_MLA", "", "Head Sizes"): ("Any", "576"),
        ("FLASH_ATTN", "FA2*", "DCP"): ("❌", "✅"),
        ("FLASH_ATTN", "FA3*", "DCP"): ("❌", "✅"),
        ("FLASHMLA", "", "DCP"): ("❌", "✅"),
        ("TRITON_MLA", "", "DCP"): ("❌", "✅"),
        # the page reads the method's literal list; the cell is the declared (inherited)
        # list, and its note says what the method, which the selection asks, accepts
        ("ROCM_ATTN", "", "KV Dtypes"): ("auto, fp8", "auto, float16, bfloat16"),
    }
    (rocm,) = [r for r in runtime.backends if r.name == "ROCM_ATTN"]
    assert rocm.notes == {
        "KV Dtypes": "supports_kv_cache_dtype(), which vLLM's selection asks, accepts auto, "
        "fp8 instead"
    }


@pytest.mark.realtree
@pytest.mark.parametrize("root", [DEMO_TREE, DEMO_OLD_TREE], ids=["demo", "demo-old"])
def test_expected_page_is_what_the_seed_writes(tmp_path: Path, root: Path) -> None:
    """``expected_attention_backends.md`` is the reference generator's own output: vLLM's
    generator (``../shared/seed``) is run on a copy of the demo tree (it reads files
    relative to its own location, so it is placed at ``tools/pre_commit`` there)."""
    seeds = sorted((vllm_trees.shared_dir() / "seed").glob("000_*.txt"))
    if not seeds:
        vllm_trees.unavailable("no seed generator in ../shared/seed")
    lines = seeds[0].read_text(encoding="utf-8").splitlines(keepends=True)
    if lines and lines[0].startswith("vllm/"):  # the archive's path line
        lines = lines[1:]
    shutil.copytree(root / "vllm", tmp_path / "vllm")
    script = tmp_path / "tools" / "pre_commit" / "generate_attention_backend_docs.py"
    script.parent.mkdir(parents=True)
    script.write_text("".join(lines), encoding="utf-8")
    out = tmp_path / "page.md"
    subprocess.run([sys.executable, str(script), "-o", str(out)], capture_output=True, check=True)
    page = out.read_text(encoding="utf-8")
    expected = (root / "expected_attention_backends.md").read_text(encoding="utf-8")
    assert page[page.index(PRIORITY_HEADING) :] == expected


def test_selection_follows_the_check_where_the_cell_shows_the_declared_list(
    runtime: Analysis,
) -> None:
    """ROCM_ATTN's cell lists its declared (inherited) KV dtypes, without fp8; vLLM's
    selection asks its supports_kv_cache_dtype(), which accepts fp8: so does select."""
    (rocm,) = [r for r in runtime.backends if r.name == "ROCM_ATTN"]
    assert "fp8" not in rocm.kv_cache_dtypes
    args = ["--platform", "rocm", "--arch", "gfx942", "--dtype", "bf16", "--head-size", "128"]
    picked = {}
    for kv in ("fp8", "bfloat16"):
        out = subprocess.run(
            [sys.executable, "-m", "sphinxext_attn", "select", "--root", str(DEMO_TREE)]
            + [*args, "--kv-cache-dtype", kv, "--format", "json"],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO,
        )
        picked[kv] = json.loads(out.stdout)["selected"]
    assert picked == {"fp8": "ROCM_ATTN", "bfloat16": None}
