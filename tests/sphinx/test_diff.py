"""Release diffs: the core diff, the CLI's ``--diff`` and ``attention-backends-diff``.

On real releases the diff is checked against an independent computation:
both releases' command-line pages are parsed back into {(backend, version):
{column: cell}} and compared cell by cell.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from attn_sphinx_util import MINI_TREE, build, sphinx_project, warnings
from treebuilder import analyze_page
from vllm_trees import tree

from sphinxext_attn.cli.main import main
from sphinxext_attn.model.diff import (
    ADDED,
    CHANGED,
    FEATURES,
    REMOVED,
    TABLE_COLUMN,
    backends_added,
    backends_removed,
    diff,
)
from sphinxext_attn.render.markdown import render_markdown

BACKENDS = "vllm/v1/attention/backends"


@pytest.fixture
def trees(tmp_path: Path) -> tuple[Path, Path]:
    """The mini tree, and a 'next release' of it: FLASHINFER gone, Triton head sizes changed,
    a priority list reordered."""
    old = tmp_path / "old"
    new = tmp_path / "new"
    shutil.copytree(MINI_TREE, old)
    shutil.copytree(MINI_TREE, new)
    registry = new / BACKENDS / "registry.py"
    registry.write_text(
        "\n".join(ln for ln in registry.read_text().splitlines() if "FLASHINFER" not in ln) + "\n"
    )
    triton = new / BACKENDS / "triton_attn.py"
    triton.write_text(triton.read_text().replace("[64, 128, 256]", "[64, 128]"))
    return old, new


def test_core_diff(trees):
    old, new = (analyze_page(t) for t in trees)
    changes = diff(old, new)
    assert backends_removed(old, new) == ["FLASHINFER"]
    assert backends_added(old, new) == []
    removed = {(c.backend, c.version) for c in changes if c.kind == REMOVED}
    assert {name for name, _ in removed} == {"FLASHINFER"}
    cells = [(c.backend, c.column, c.old, c.new) for c in changes if c.kind == CHANGED]
    assert ("TRITON_ATTN", "Head Sizes", "64, 128, 256", "64, 128") in cells
    assert diff(old, old) == []
    # the reverse diff mirrors it
    back = diff(new, old)
    assert {(c.backend, c.version) for c in back if c.kind == ADDED} == removed


def test_cli_diff_markdown_and_json(trees, capsys):
    old, new = trees
    assert main(["--profile", "vllm-page", "--root", str(new), "--diff", str(old)]) == 0
    out = capsys.readouterr().out
    assert "## Backends removed\n\n- `FLASHINFER`" in out
    assert "| TRITON_ATTN |  | Head Sizes | 64, 128, 256 | 64, 128 |" in out
    assert (
        main(
            ["--profile", "vllm-page", "--root", str(new), "--diff", str(old), "--format", "json"]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["removed"] == ["FLASHINFER"] and data["added"] == []
    assert {
        "section": FEATURES,
        "kind": CHANGED,
        "backend": "TRITON_ATTN",
        "version": "",
        "column": "Head Sizes",
        "old": "64, 128, 256",
        "new": "64, 128",
    } in data["changes"]


def test_cli_diff_needs_a_tree(tmp_path, capsys):
    assert main(["--profile", "vllm-page", "--root", str(MINI_TREE), "--diff", str(tmp_path)]) == 2
    assert "no vllm/ package" in capsys.readouterr().err


# -- real releases, against an independent reading of the two pages -----------------


def page_rows(markdown: str) -> dict[tuple[str, str], dict[str, str]]:
    """Feature rows of a CLI page: (backend, version) -> {column: cell without quoting}."""
    rows: dict[tuple[str, str], dict[str, str]] = {}
    header: list[str] | None = None
    for line in markdown.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            continue
        if set(line) <= set("|-"):
            continue
        if header[0] != "Backend" or "Description" in header:
            continue  # priority, legend and prefill tables
        row = {h: c.replace("`", "") for h, c in zip(header, cells, strict=True)}
        rows[(row["Backend"], row.get("Version", ""))] = row
    return rows


def independent_diff(old_md: str, new_md: str):
    before, after = page_rows(old_md), page_rows(new_md)
    added = sorted({n for n, _ in after} - {n for n, _ in before})
    removed = sorted({n for n, _ in before} - {n for n, _ in after})
    rows_added = set(after) - set(before)
    rows_removed = set(before) - set(after)
    cells = set()
    for key in set(before) & set(after):
        for column in set(before[key]) & set(after[key]):
            if before[key][column] != after[key][column]:
                cells.add((*key, column, before[key][column], after[key][column]))
    return added, removed, rows_added, rows_removed, cells


@pytest.mark.realtree
@pytest.mark.parametrize(
    ("old", "new"), [("0.32.0", "0.33.0"), ("0.30.0", "0.31.0"), ("0.27.0", "0.28.0")]
)
def test_release_diff_matches_the_pages(old, new):
    a, b = analyze_page(tree(old)), analyze_page(tree(new))
    added, removed, rows_added, rows_removed, cells = independent_diff(
        render_markdown(a), render_markdown(b)
    )
    assert backends_added(a, b) == added
    assert backends_removed(a, b) == removed
    changes = [c for c in diff(a, b) if c.section == FEATURES]
    assert {(c.backend, c.version) for c in changes if c.kind == ADDED} == rows_added
    assert {(c.backend, c.version) for c in changes if c.kind == REMOVED} == rows_removed
    before, after = page_rows(render_markdown(a)), page_rows(render_markdown(b))
    mine = {
        (c.backend, c.version, c.column, c.old, c.new)
        for c in changes
        if c.kind == CHANGED and c.column != TABLE_COLUMN
    }
    # the diff also covers columns the pages leave out (Non-Causal, DCP): compare on the
    # cells both pages show
    visible = {
        m
        for m in mine
        if m[2] in before.get((m[0], m[1]), {}) and m[2] in after.get((m[0], m[1]), {})
    }
    assert visible == cells
    if (old, new) == ("0.32.0", "0.33.0"):
        assert added == sorted(
            ["FLASH_ATTN_MLA_SPARSE_FA4", "ROCM_FLASHMLA_SPARSE_DSV41", "ROCM_OCTAVE", "STEP5_DSA"]
        )
        assert removed == []


# -- the directive ---------------------------------------------------------------


def _project(tmp_path: Path, body: str, trees: dict[str, str] | None = None) -> Path:
    conf = "" if trees is None else f"attention_backends_trees = {trees!r}\n"
    return sphinx_project(tmp_path, {"index": "Diff\n====\n\n" + body}, conf)


def test_directive_with_named_trees(make_app, tmp_path, trees):
    old, new = trees
    src = _project(
        tmp_path,
        ".. attention-backends-diff::\n   :from: old\n   :to: new\n",
        {"old": str(old), "new": str(new)},
    )
    app = build(make_app, src, tree=None, warningiserror=True)
    assert warnings(app) == ""
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    assert re.search(r"Backends removed:</strong> <code[^>]*><span class=\"pre\">FLASHINFER", html)
    assert "Backends added:</strong> none" in html
    assert "<td><p>64, 128, 256</p></td>" in html and "<td><p>64, 128</p></td>" in html


def test_directive_with_paths_and_default_to(make_app, tmp_path, trees):
    old, new = trees
    src = _project(tmp_path, f".. attention-backends-diff::\n   :from: {old}\n")
    for builder in ("latex", "text"):
        app = build(make_app, src, builder, tree=new, warningiserror=True)
        assert warnings(app) == ""
    out = "".join(p.read_text() for p in Path(app.outdir).glob("*.txt"))
    assert "FLASHINFER" in out and "Head Sizes" in out


def test_directive_unknown_tree_is_an_error(make_app, tmp_path, trees):
    src = _project(tmp_path, ".. attention-backends-diff::\n   :from: nope\n", {"old": "x"})
    app = build(make_app, src, tree=trees[1])
    text = warnings(app)
    assert "index.rst:4" in text and "'nope' is neither a tree name (old)" in text
