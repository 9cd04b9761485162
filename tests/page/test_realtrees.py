"""Real vLLM releases: byte parity with vLLM's own page on 0.16.0, and every cell
attncmp scores against every golden in ``../shared/vllm/golden`` and the pages
releases ship, with the exact mismatches of known_differences.toml (none today)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest
import release_pages
import vllm_trees
from known import assert_exactly
from vllm_trees import IN_TREE_PAGES, RELEASES

from sphinxext_attn.cli.main import main

pytestmark = pytest.mark.realtree

MARKER = "## Backend Priority (CUDA)"
#: The goldens in ../shared/vllm/golden, each scored against the page made here.
GOLDENS = ("0.16.0", "0.18.0", "0.20.0", "0.23.0", "0.25.0", "0.28.0", "0.30.0", "0.33.0")
TOTAL = re.compile(r"^TOTAL (\d+)/(\d+) ", re.M)


def golden(version: str):
    vllm_trees.shared_dir()
    path = vllm_trees.GOLDEN_DIR / f"attention_backends-{version}.md"
    if not path.is_file():
        vllm_trees.unavailable(f"no golden {path}")
    return path


def test_parity_0_16_0(tmp_path):
    expected = golden("0.16.0").read_text(encoding="utf-8")
    page = release_pages.page("0.16.0")
    assert MARKER in page and MARKER in expected
    ours = page[page.index(MARKER) :]
    theirs = expected[expected.index(MARKER) :]
    if ours != theirs:  # a readable first difference, then the exact comparison
        a, b = ours.splitlines(), theirs.splitlines()
        first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
        where = min(len(a), len(b)) if first is None else first
        detail = f"line {where}: {a[where : where + 1]} != {b[where : where + 1]}"
        pytest.fail(f"0.16.0 output differs from the golden after {MARKER!r}: {detail}")
    assert ours == theirs


def test_parity_0_16_0_without_a_template_as_well_with_one(tmp_path):
    """0.16.0's page is the seed's: the same tail whatever the template."""
    page = release_pages.page("0.16.0")
    shipped = vllm_trees.tree("0.16.0") / PAGE
    templated = with_the_release_page("0.16.0", tmp_path)
    assert page[page.index(MARKER) :] == templated[templated.index(MARKER) :]
    assert templated == shipped.read_text(encoding="utf-8")


PAGE = "docs/design/attention_backends.md"


def with_the_release_page(version: str, tmp_path) -> str:
    """The vllm-page profile with the release's own page as template (its gen:
    markers filled from 0.27 on)."""
    tree = vllm_trees.tree(version)
    out = tmp_path / f"templated-{version}.md"
    args = ["--root", str(tree), "--profile", "vllm-page", "--no-cache", "-o", str(out)]
    assert main([*args, "--template", str(tree / PAGE)]) == 0
    return out.read_text(encoding="utf-8")


@pytest.mark.parametrize("version", GOLDENS)
def test_byte_identical_to_vllms_page(version, tmp_path):
    """With the release's page as template, vLLM's page byte for byte: layout,
    footnotes and sections as that release's generator writes them."""
    gold = golden(version)
    if not vllm_trees.PAGESAME.is_file():
        vllm_trees.unavailable(f"no {vllm_trees.PAGESAME}")
    ours = tmp_path / "ours.md"
    ours.write_text(with_the_release_page(version, tmp_path), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(vllm_trees.PAGESAME), str(ours), str(gold)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.stdout.strip() == "SAME", f"vLLM {version}: {proc.stdout}"


@pytest.mark.parametrize("version", RELEASES)
def test_the_hook_leaves_the_release_page_as_it_is(version, tmp_path):
    """The hook's command (.pre-commit-hooks.yaml) on an unmodified copy of the page
    each release ships: it passes and leaves it byte for byte (tables regenerated
    identically up to 0.26; a marker page from 0.27 is not rewritten at all)."""
    tree = vllm_trees.tree(version)
    copy = tmp_path / "attention_backends.md"
    shutil.copyfile(tree / PAGE, copy)
    hook = ["--check", "--profile", "vllm-page", "-o", str(copy), "vllm/platforms/cuda.py"]
    assert main(["--root", str(tree), "--no-cache", *hook]) == 0
    assert copy.read_bytes() == (tree / PAGE).read_bytes()


def test_every_golden_is_scored():
    vllm_trees.shared_dir()
    versions = [v for v, _ in vllm_trees.goldens()]
    assert versions, f"no goldens in {vllm_trees.GOLDEN_DIR}"
    assert set(versions) == set(GOLDENS)


def attncmp(version: str, gold, tmp_path) -> tuple[int, int, list[str]]:
    """Score our page for ``version`` against ``gold``: (matched, total, mismatched cells)."""
    if not vllm_trees.ATTNCMP.is_file():
        vllm_trees.unavailable(f"no {vllm_trees.ATTNCMP}")
    page = tmp_path / "candidate.md"
    page.write_text(release_pages.page(version), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(vllm_trees.ATTNCMP), str(page), str(gold), "-v"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    match = TOTAL.search(proc.stdout)
    assert match, f"attncmp printed no TOTAL line:\n{proc.stdout}\n{proc.stderr}"
    # "  feature ('standard', 'FLASH_ATTN') [Sink]: cand=... gold=..." -> the cell's name
    mismatches = [ln.strip().split(": ")[0] for ln in proc.stdout.splitlines() if ln[:2] == "  "]
    return int(match.group(1)), int(match.group(2)), mismatches


@pytest.mark.parametrize("version", GOLDENS)
def test_attncmp_against_the_golden(version, tmp_path):
    matched, total, mismatches = attncmp(version, golden(version), tmp_path)
    assert total > 200, f"the golden of {version} has no tables to score ({total} cells)"
    assert_exactly(mismatches, "release-pages", f"golden-{version}")


@pytest.mark.parametrize("version", IN_TREE_PAGES)
def test_attncmp_score_against_the_page_the_release_ships(version, tmp_path):
    """Held-out releases: the tables vLLM committed in that release's own docs."""
    page = vllm_trees.tree(version) / "docs" / "design" / "attention_backends.md"
    assert page.is_file(), f"{page} missing from the source archive"
    matched, total, mismatches = attncmp(version, page, tmp_path)
    assert total > 200, f"{page} has no tables to score ({total} cells)"
    assert_exactly(mismatches, "release-pages", f"shipped-{version}")


@pytest.mark.parametrize("version", RELEASES)
def test_release_analyses_cleanly(version):
    analysis = vllm_trees.analysis(version)
    assert analysis.version == version
    # the lists vLLM's page shows: from 0.24 its generator misses the MLA default list
    # (behind an ``elif``), so only these are in every release
    assert {(p.category, p.arch) for p in analysis.priorities} >= {
        ("standard", "default"),
        ("mla", "sm100"),
    }
    standard = {r.name for r in analysis.rows("standard")}
    mla = {r.name for r in analysis.rows("mla")}
    assert {"FLASH_ATTN", "TRITON_ATTN", "FLASHINFER"} <= standard
    assert {"TRITON_MLA", "FLASHMLA"} <= mla
    assert not standard & mla
    broken = [str(d) for d in analysis.diagnostics if d.subtype in ("syntax", "decode", "outside")]
    assert broken == []
    # every backend named in a priority list has a row
    listed = {b for p in analysis.priorities for b in p.backends}
    assert listed <= standard | mla, listed - (standard | mla)


def test_unavailable_skips_or_fails(monkeypatch):
    """The locator's policy: skip by default, fail when ATTN_REQUIRE_TREES=1."""
    monkeypatch.delenv("ATTN_REQUIRE_TREES", raising=False)
    with pytest.raises(pytest.skip.Exception):
        vllm_trees.unavailable("no tree")
    monkeypatch.setenv("ATTN_REQUIRE_TREES", "1")
    with pytest.raises(pytest.fail.Exception, match="ATTN_REQUIRE_TREES"):
        vllm_trees.unavailable("no tree")
