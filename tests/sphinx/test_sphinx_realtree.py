"""Real vLLM trees through Sphinx: 0.16.0 scores 100% on its golden; 0.33.0 matches the CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import vllm_trees
from attn_sphinx_util import (
    SHOWS_TYPES,
    Table,
    build,
    counting_opens,
    page_tables,
    sphinx_project,
    warnings,
)

pytestmark = pytest.mark.realtree

SUB_PAGES = {
    "priority": "attention-backends-priority",
    "legend": "attention-backends-legend",
    "standard": "attention-backends-standard",
    "prefill": "attention-backends-mla-prefill",
    "decode": "attention-backends-mla-decode",
    "minimax": "attention-backends-family:: minimax",
    "dsv4": "attention-backends-family:: dsv4",
    "all": "attention-backends",
}


def _project(tmp_path: Path) -> Path:
    pages = {"index": "Index\n=====\n"}
    for page, directive in SUB_PAGES.items():
        directive += "" if "::" in directive else "::"
        pages[page] = f"{page}\n{'=' * len(page)}\n\n.. {directive}\n"
    return sphinx_project(tmp_path, pages, toctree=True)


def as_markdown(tables: list[Table]) -> str:
    """Tables under the headings vLLM's page puts them (what attncmp keys on)."""
    lines: list[str] = []
    for t in tables:
        if "attn-priority" in t.classes:
            category = "MLA Attention" if "attn-mla" in t.classes else "Standard Attention"
            lines += ["## Backend Priority (CUDA)", f"### {category}", f"**{t.caption}:**", ""]
        elif "attn-legend" in t.classes:
            lines += ["## Legend", ""]
        elif "attn-prefill" in t.classes:
            lines += ["## MLA (Multi-head Latent Attention) Backends", "### Prefill Backends", ""]
        elif "attn-mla" in t.classes or "attn-dsv4" in t.classes:
            lines += ["## MLA (Multi-head Latent Attention) Backends", "### Decode Backends", ""]
        else:
            lines += ["## Standard Attention (MHA, MQA, GQA) Backends", ""]
        lines += [*t.markdown(), ""]
    return "\n".join(lines)


def _only_source_warnings(app, tree: Path) -> None:
    """Real trees may carry diagnostics (a registry entry with no file); nothing else."""
    for line in warnings(app).splitlines():
        assert line.count("[attention_backends.") == int(SHOWS_TYPES) and str(tree) in line, line


def _attncmp(candidate: Path, golden: Path) -> str:
    proc = subprocess.run(
        [sys.executable, str(vllm_trees.ATTNCMP), str(candidate), str(golden), "-v"],
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout


def test_016_each_subdirective_scores_100(make_app, tmp_path):
    tree = vllm_trees.tree("0.16.0")
    golden = vllm_trees.shared_dir() / "vllm" / "golden" / "attention_backends-0.16.0.md"
    if not golden.is_file() or not vllm_trees.ATTNCMP.is_file():
        vllm_trees.unavailable("the 0.16.0 golden or attncmp is missing")
    app = build(make_app, _project(tmp_path), tree=tree)
    _only_source_warnings(app, tree)
    sub = [t for page in SUB_PAGES if page != "all" for t in page_tables(app, page)]
    for name, tables in (("sub", sub), ("all", page_tables(app, "all"))):
        candidate = tmp_path / f"{name}.md"
        candidate.write_text(as_markdown(tables), encoding="utf-8")
        report = _attncmp(candidate, golden)
        assert report.strip().endswith("100.0%"), report
        assert "extra_rows 0" in report, report


def _markdown_tables(text: str) -> list[list[list[str]]]:
    """Every pipe table of a markdown page, as rows of cells (header first)."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] | None = None
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if all(set(c) <= set("-:") for c in cells):
                continue
            if current is None:
                current = []
                tables.append(current)
            current.append(cells)
        else:
            current = None
    return tables


def test_033_cells_equal_the_command_line(make_app, tmp_path):
    tree = vllm_trees.tree("0.33.0")
    from sphinxext_attn.analysis import analyze
    from sphinxext_attn.render.markdown import render_markdown

    analysis = analyze(str(tree), profile="vllm-page")
    page = render_markdown(analysis)
    # vLLM's page marks FLASHINFER_MLA_SPARSE in a priority list (its footnote on
    # sparse MLA); the directives' priority tables do not carry that marker
    marks = {
        m
        for text in [analysis.page_text]
        if text
        for a in text.annotations.values()
        for m in a.values()
    }
    assert marks == {"**\\***"}
    for mark in marks:
        page = page.replace(f"`{mark} |", "` |")
    expected = _markdown_tables(page)
    app = build(make_app, _project(tmp_path), tree=tree)
    _only_source_warnings(app, tree)
    got = [[t.header, *t.rows] for t in page_tables(app, "all")]
    assert got == expected
    sub = [[t.header, *t.rows] for p in SUB_PAGES if p != "all" for t in page_tables(app, p)]
    assert sorted(map(str, sub)) == sorted(map(str, expected))


def test_016_noop_rebuild_opens_nothing(make_app, tmp_path):
    """Even with a registry entry whose file is missing, a clean rebuild reads nothing."""
    tree = vllm_trees.tree("0.16.0")
    src = _project(tmp_path)
    build(make_app, src, tree=tree)
    with counting_opens(tree) as opened:
        app = make_app(
            "html",
            srcdir=src,
            confoverrides={
                "attention_backends_root": str(tree),
                "attention_backends_profile": "vllm-page",
            },
        )
        reads: list[str] = []
        app.connect("env-before-read-docs", lambda _a, _e, docnames: reads.extend(docnames))
        app.build()
        app.cleanup()
    assert reads == []
    assert opened == {}
