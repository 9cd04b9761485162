"""The runtime profile on real vLLM releases: a few rows of 0.33.0 pinned, and the
command line's JSON scored against the shared truth files, differing in the listed
cells only (needs fetched release trees and ../shared)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import vllm_trees
from known import assert_exactly


@pytest.fixture(scope="module")
def runtime_033() -> Any:
    return vllm_trees.analysis("0.33.0", "runtime")


@pytest.mark.realtree
def test_0_33_flashmla_head_sizes_and_dcp(runtime_033):
    (row,) = [r for r in runtime_033.backends if r.name == "FLASHMLA"]
    assert set(row.supports["head_sizes"]) == {320, 512, 576}
    assert row.supports_dcp is True
    assert "DCP" not in row.unknown and "Head Sizes" not in row.unknown


@pytest.mark.realtree
def test_0_33_b12x_is_blackwell_consumer_only(runtime_033):
    (row,) = [r for r in runtime_033.backends if r.name == "B12X"]
    assert row.supports["compute_capabilities"] == ["12.0", "12.1"]


@pytest.mark.realtree
def test_0_33_composite_backends_have_rows(runtime_033):
    names = {r.name for r in runtime_033.backends}
    assert {"TRITON_FLASH_ATTN", "TRITON_FLASHINFER"} <= names
    for name in ("TRITON_FLASH_ATTN", "TRITON_FLASHINFER"):
        (row,) = [r for r in runtime_033.backends if r.name == name]
        assert row.supports.get("head_sizes"), (name, row.unknown)


def _shared() -> Path:
    shared = vllm_trees.shared_dir()
    if not (shared / "tools" / "truthcmp").is_file():
        vllm_trees.unavailable(f"{shared / 'tools' / 'truthcmp'} not present")
    return shared


#: The head sizes truthcmp's truth files were asked on.
TRUTH_HEAD_GRID = (8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 112, 120, 128, 160, 192, 224)
TRUTH_HEAD_GRID += (256, 288, 320, 384, 512, 576, 640, 768, 1024)


def grid_sizes(path: Path) -> None:
    """truthcmp reads ``supports.head_sizes`` items as sizes: each rule item is
    replaced by the sizes of its grid the rule accepts (``exactcmp`` and
    tests/runtime/test_exact_sets.py score the rules themselves)."""
    data = json.loads(path.read_text())
    for row in data["backends"]:
        items = row.get("supports", {}).get("head_sizes")
        if not isinstance(items, list):
            continue
        sizes = {i for i in items if isinstance(i, int)}
        for rule in (i for i in items if isinstance(i, dict)):
            lo, hi, step = rule["min"] or 1, rule["max"], rule["multiple_of"] or 1
            sizes |= {
                h for h in TRUTH_HEAD_GRID if h >= lo and (hi is None or h <= hi) and h % step == 0
            }
        row["supports"]["head_sizes"] = sorted(sizes)
    path.write_text(json.dumps(data))


@pytest.mark.realtree
@pytest.mark.parametrize("version", ["0.16.0", "0.23.0", "0.33.0"])
def test_cli_json_differs_from_the_truth_in_the_listed_cells_only(tmp_path, version):
    shared = _shared()
    truth = shared / "vllm" / "truth" / f"truth-{version}.json"
    if not truth.is_file():
        vllm_trees.unavailable(f"{truth} not present")
    root = vllm_trees.tree(version)
    out = tmp_path / f"analysis-{version}.json"
    cli = [sys.executable, "-m", "sphinxext_attn", "--root", str(root), "--format", "json"]
    subprocess.run([*cli, "-o", str(out)], check=True, capture_output=True, timeout=600)
    assert json.loads(out.read_text())["backends"]
    grid_sizes(out)
    tool = shared / "tools" / "truthcmp"
    done = subprocess.run(
        [sys.executable, str(tool), str(truth), str(out), "-v"],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    match = re.search(r"TRUTH (\d+)/(\d+) ", done.stdout.strip().splitlines()[-1])
    assert match and int(match.group(2)) > 100, done.stdout
    # "  FLASHMLA Head Sizes: page [...] truth [...]" -> "FLASHMLA Head Sizes"
    cells = [ln.strip().split(":")[0] for ln in done.stdout.splitlines() if ln[:2] == "  "]
    assert int(match.group(2)) - int(match.group(1)) == len(cells), done.stdout
    assert_exactly(cells, "truth", version)
