"""Real releases: the columns vLLM's page grew (DCP from 0.17, Non-Causal from 0.21).

attncmp scores the seed's nine feature columns only; here its parser is given
every column the reference page shows, and each release's headers must be the
reference's exactly. References: the goldens, and the pages releases 0.17-0.26
ship in their source archive.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.machinery
import importlib.util
import io

import pytest
import release_pages
import vllm_trees
from known import assert_exactly
from vllm_trees import IN_TREE_PAGES, RELEASES

pytestmark = pytest.mark.realtree


@functools.cache
def _attncmp():  # type: ignore[no-untyped-def]
    if not vllm_trees.ATTNCMP.is_file():
        vllm_trees.unavailable(f"no {vllm_trees.ATTNCMP}")
    loader = importlib.machinery.SourceFileLoader("attncmp_all", str(vllm_trees.ATTNCMP))
    spec = importlib.util.spec_from_loader("attncmp_all", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _headers(text: str) -> list[list[str]]:
    """The header rows of a page's feature tables, in page order."""
    return [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("| Backend |") and "Dtypes" in line and "Description" not in line
    ]


def _reference(version: str):
    golden = vllm_trees.GOLDEN_DIR / f"attention_backends-{version}.md"
    if golden.is_file():
        return golden
    shipped = vllm_trees.tree(version) / "docs" / "design" / "attention_backends.md"
    assert shipped.is_file(), shipped
    return shipped


REFERENCED = sorted({v for v, _ in vllm_trees.goldens()} | set(IN_TREE_PAGES))


@pytest.mark.parametrize("version", REFERENCED)
def test_every_column_of_the_reference_page(version):
    vllm_trees.shared_dir()
    reference = _reference(version).read_text(encoding="utf-8")
    ours = release_pages.page(version)
    # the standard and MLA decode tables (the DeepSeek V4 table of newer pages too)
    assert _headers(ours)[: len(_headers(reference))] == _headers(reference)
    columns = [c for h in _headers(reference) for c in h if c not in ("Backend", "Version")]
    columns = list(dict.fromkeys(columns))
    mismatches, total = _mismatches(ours, reference, columns)
    assert total > 200, f"vLLM {version}: {total} cells on {columns}"
    assert_exactly(mismatches, "release-pages", f"all-columns-{version}")
    later = [c for c in columns if c in ("DCP", "Non-Causal")]
    if later:  # the later columns' own cells are scored: every one as vLLM's generator wrote it
        assert any(f"[{c}]" in cell for c in later for cell in _cells(ours, reference, later))


def _mismatches(ours: str, reference: str, columns: list[str]) -> tuple[list[str], int]:
    """The cells of ``columns`` (and priorities, memberships, prefill) that differ; the total."""
    attncmp = _attncmp()
    attncmp.SEED_FEATURE_COLS = columns
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        result = attncmp.score(attncmp.parse(ours), attncmp.parse(reference), verbose=True)
    lines = [ln.strip().split(": ")[0] for ln in said.getvalue().splitlines() if ln[:2] == "  "]
    return lines, sum(t for _, t in result.values())


def _cells(ours: str, reference: str, columns: list[str]) -> list[str]:
    """The names of the feature cells attncmp compares for ``columns``, matched or not."""
    attncmp = _attncmp()
    attncmp.SEED_FEATURE_COLS = columns
    gold = attncmp.parse(reference)
    return [f"{key} [{c}]" for key, row in gold["feature"].items() for c in row]


@pytest.mark.parametrize("version", RELEASES)
def test_column_set_follows_the_release(version):
    analysis = vllm_trees.analysis(version)
    minor = int(version.split(".")[1])
    expected = ("Non-Causal", "DCP") if minor >= 21 else ("DCP",) if minor >= 17 else ()
    assert analysis.page_columns == expected
    assert "Sliding Window" in analysis.column_choices() or minor < 30
    if minor >= 17:
        mla = {r.name: r.supports_dcp for r in analysis.rows("mla")}
        assert mla["FLASHMLA"] and mla["TRITON_MLA"]  # impls that return the LSE


def test_runtime_profile_shows_dcp_from_the_impl_on_0_17():
    analysis = vllm_trees.analysis("0.17.0", "runtime")
    assert "DCP" in analysis.feature_columns("standard")
    assert "Non-Causal" not in analysis.feature_columns("standard")
    by_name = {r.name: r for r in analysis.backends}
    assert by_name["FLASH_ATTN"].supports_dcp and "DCP" not in by_name["FLASH_ATTN"].unknown
    assert not by_name["TRITON_ATTN"].supports_dcp
    assert by_name["FLASH_ATTN"].cell("DCP") == "✅"
