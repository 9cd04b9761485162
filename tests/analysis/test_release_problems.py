"""Problems of an unmodified release are info (listed under the table); real ones warn.

A registry entry whose module the release never shipped, or whose class the
release builds at run time, is something no docs author can fix: by default
it is logged at info level and the affected table says "Not analysed: NAME
(why)", so ``-W`` passes. ``attention_backends_strict = True`` makes them
warnings. Syntax errors, paths leaving the tree and files the analysis needs
stay warnings either way. Warning locations name the file, and the line only
where there is one.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import vllm_trees
from attn_sphinx_util import build, has_type, sphinx_project, warnings
from treebuilder import (
    BACKENDS,
    CUDA,
    DEFAULT_ENTRIES,
    REGISTRY,
    analyze_page,
    backend_source,
    build_tree,
    registry_source,
)

from sphinxext_attn.analysis.pipeline import analyze

GHOST = {"NO_ATTENTION": "vllm.v1.attention.backends.no_attention.NoAttentionBackend"}
COMPOSITE = {"COMBO_ATTN": "vllm.v1.attention.backends.combo.ComboBackend"}
COMBO_SOURCE = (
    "from vllm.v1.attention.backends.composite import make_composite\n\n"
    "ComboBackend = make_composite(name='ComboBackend')\n"
)
MLA_GHOST = {"GHOST_MLA": "vllm.v1.attention.backends.mla.ghost.GhostMLABackend"}


def _tree(tmp_path: Path, extra_entries: dict[str, str], files=None) -> Path:
    entries = dict(DEFAULT_ENTRIES, **extra_entries)
    return build_tree(tmp_path / "tree", {REGISTRY: registry_source(entries), **(files or {})})


def _project(tmp_path: Path) -> Path:
    directives = {
        "standard": "attention-backends-standard",
        "mla": "attention-backends-mla-decode",
        "all": "attention-backends",
        "legend": "attention-backends-legend",
    }
    pages = {"index": "Index\n=====\n"}
    for page, directive in directives.items():
        pages[page] = f"{page}\n{'=' * len(page)}\n\n.. {directive}::\n"
    return sphinx_project(tmp_path, pages, toctree=True)


def _text(app, page: str) -> str:
    html = (Path(app.outdir) / f"{page}.html").read_text(encoding="utf-8")
    return re.sub(r"<[^>]+>", "", html)


def test_core_marks_release_problems(tmp_path):
    tree = _tree(tmp_path, {**GHOST, **COMPOSITE}, {f"{BACKENDS}/combo.py": COMBO_SOURCE})
    diags = analyze_page(tree).diagnostics
    release = {d.message.split(":")[0]: d for d in diags if d.release}
    assert set(release) == {"NO_ATTENTION", "COMBO_ATTN"}, diags
    assert release["COMBO_ATTN"].location.line == 3  # the assignment that builds it
    assert "built at run time" in release["COMBO_ATTN"].message
    assert not [d for d in diags if not d.release], diags


def test_release_problems_are_info_and_listed_under_the_table(make_app, tmp_path):
    files = {f"{BACKENDS}/combo.py": COMBO_SOURCE}
    tree = _tree(tmp_path, {**GHOST, **COMPOSITE, **MLA_GHOST}, files)
    app = build(make_app, _project(tmp_path), tree=tree, warningiserror=True)
    assert warnings(app) == ""
    status = app._status.getvalue()
    assert "NO_ATTENTION: module file vllm/v1/attention/backends/no_attention.py" in status
    assert "attention_backends_strict" in status  # says how to make it a warning
    standard = _text(app, "standard")
    assert (
        "Not analysed: NO_ATTENTION (module file vllm/v1/attention/backends/no_attention.py "
        "not found)" in standard
    )
    assert "COMBO_ATTN (ComboBackend is built at run time" in standard
    assert "GHOST_MLA" not in standard  # listed under the MLA table instead
    mla = _text(app, "mla")
    assert "Not analysed: GHOST_MLA (module file" in mla
    assert "NO_ATTENTION" not in mla
    everything = _text(app, "all")
    assert all(n in everything for n in ("NO_ATTENTION", "COMBO_ATTN", "GHOST_MLA"))
    assert "Not analysed" not in _text(app, "legend")


def test_strict_makes_them_warnings(make_app, tmp_path):
    tree = _tree(tmp_path, GHOST)
    app = build(
        make_app,
        _project(tmp_path),
        tree=tree,
        confoverrides={"attention_backends_strict": True},
    )
    text = warnings(app)
    assert text.count("WARNING") == 1, text
    assert f"{tree / REGISTRY}:" in text and "NO_ATTENTION" in text
    assert has_type(text, "attention_backends.missing")
    assert "Not analysed: NO_ATTENTION" in _text(app, "standard")


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({f"{BACKENDS}/triton_attn.py": "class TritonAttentionBackend(:\n"}, "syntax"),
        ({CUDA: None}, "cuda.py"),
        (
            {REGISTRY: registry_source(dict(DEFAULT_ENTRIES, OUT="os.path.join"))},
            "OUT",
        ),
        (
            {f"{BACKENDS}/triton_attn.py": backend_source("SomethingElse")},
            "class TritonAttentionBackend not found",
        ),
    ],
    ids=["syntax-error", "needed-file-missing", "path-outside", "class-missing"],
)
@pytest.mark.parametrize("profile", ["runtime", "vllm-page"])
def test_real_problems_warn_strict_or_not(make_app, tmp_path, files, expected, strict, profile):
    tree = build_tree(tmp_path / "tree", files)
    app = build(
        make_app,
        _project(tmp_path),
        tree=tree,
        profile=profile,
        confoverrides={"attention_backends_strict": strict},
    )
    text = warnings(app)
    assert "WARNING" in text and expected in text, text
    # a real problem is a warning, never moved to the table's "not analysed" list
    # (rows that are built, with cells not evaluated, are "Not evaluated" instead)
    listed = [ln for ln in _text(app, "standard").splitlines() if "Not analysed" in ln]
    assert not listed


def test_warning_without_a_line_has_no_empty_line_field(make_app, tmp_path):
    tree = build_tree(
        tmp_path / "tree", {f"{BACKENDS}/triton_attn.py": backend_source("SomethingElse")}
    )
    app = build(make_app, _project(tmp_path), tree=tree)
    text = warnings(app)
    path = tree / BACKENDS / "triton_attn.py"
    assert f"{path}: WARNING: TRITON_ATTN: class TritonAttentionBackend not found" in text, text
    assert "::" not in text.replace("[attention_backends", ""), text


def test_warning_with_a_line_names_it(make_app, tmp_path):
    tree = build_tree(tmp_path / "tree", {f"{BACKENDS}/triton_attn.py": "x = (\n"})
    app = build(make_app, _project(tmp_path), tree=tree)
    assert re.search(
        rf"{re.escape(str(tree / BACKENDS))}/triton_attn\.py:\d+: WARNING", warnings(app)
    )


@pytest.mark.parametrize("how", ["config", "option"])
def test_root_without_vllm_is_one_warning(make_app, tmp_path, how):
    empty = tmp_path / "empty"
    empty.mkdir()
    src = _project(tmp_path)
    if how == "option":
        (src / "standard.rst").write_text(
            f"standard\n========\n\n.. attention-backends-standard::\n   :root: {empty}\n"
        )
        build(make_app, src, tree=build_tree(tmp_path / "tree"))
    app = build(make_app, src, tree=empty if how == "config" else build_tree(tmp_path / "t2"))
    text = warnings(app)
    assert text.count("WARNING") == 1, text
    assert f"no vllm/ package under {empty}" in text
    assert "Traceback" not in text


@pytest.mark.realtree
@pytest.mark.parametrize("profile", [None, "vllm-page"], ids=["default-config", "vllm-page"])
@pytest.mark.parametrize("version", ["0.16.0", "0.33.0"])
def test_unmodified_release_builds_with_w(make_app, tmp_path, version, profile):
    tree = vllm_trees.tree(version)
    app = build(make_app, _project(tmp_path), tree=tree, profile=profile, warningiserror=True)
    assert app.config.attention_backends_profile == (profile or "runtime")
    assert warnings(app) == ""
    standard = _text(app, "standard")
    assert "Not analysed: " in standard and "NO_ATTENTION (module file" in standard
    strict = build(
        make_app,
        _project(Path(tmp_path / "strict").resolve()),
        tree=tree,
        profile=profile,
        confoverrides={"attention_backends_strict": True},
    )
    assert "NO_ATTENTION" in warnings(strict)


def test_built_rows_with_unknown_cells_are_not_evaluated_not_unanalysed(make_app, tmp_path):
    """A row that is built lists its ``?`` cells as "Not evaluated: NAME Column (why)",
    never under "Not analysed" (which is for rows not built)."""
    tree = _tree(tmp_path, GHOST)
    app = build(make_app, _project(tmp_path), tree=tree, profile="runtime")
    analysis = analyze(tree, profile="runtime")
    unknown = [(r.name, c) for r in analysis.backends for c in r.unknown if not r.is_mla]
    assert unknown, "the tiny tree has cells the evaluator cannot answer"
    standard = _text(app, "standard")
    name, column = unknown[0]
    assert f"Not evaluated: {name} {column} (" in standard.replace("\n", " "), standard
    listed = [ln for ln in standard.splitlines() if "Not analysed" in ln]
    assert listed and all(name not in ln for ln in listed), listed
    assert "NO_ATTENTION" in listed[0]
