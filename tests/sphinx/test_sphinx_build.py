"""Whole builds of a small project: every builder clean, rST and MyST alike, labels reachable."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from attn_sphinx_util import (
    MINI_TREE,
    build,
    copy_root,
    copy_tree,
    has_type,
    page_tables,
    warnings,
)
from docutils import nodes


@pytest.fixture
def srcdir(tmp_path: Path) -> Path:
    return copy_root("basic", tmp_path)


def _table_html(html: str) -> list[str]:
    """The <table> elements with their generated ids taken out."""
    found = re.findall(r"<table.*?</table>", html, flags=re.S)
    return [re.sub(r' id="[^"]*"', "", t) for t in found]


def test_html_clean_and_tables(make_app, srcdir):
    app = build(make_app, srcdir)
    assert warnings(app) == ""
    (std,) = page_tables(app, "standard")
    assert "attn-standard" in std.classes
    assert std.header[:3] == ["Backend", "Version", "Dtypes"]
    assert [r[:2] for r in std.rows] == [
        ["`FLASHINFER`", "Native†"],
        ["`FLASHINFER`", "TRTLLM†"],
        ["`FLASH_ATTN`", "FA2*"],
        ["`FLASH_ATTN`", "FA3*"],
        ["`TRITON_ATTN`", ""],
    ]
    kv = std.header.index("KV Dtypes")
    assert std.rows[0][kv] == "`auto`, `fp8`"
    html = (Path(app.outdir) / "standard.html").read_text(encoding="utf-8")
    assert "attn-footnotes" in html and "flash_attn_version=2" in html
    assert (Path(app.outdir) / "_static" / "attention_backends.css").is_file()
    assert "attention_backends.css" in html


def test_rst_and_myst_give_identical_tables(make_app, srcdir):
    app = build(make_app, srcdir)
    rst = (Path(app.outdir) / "standard.html").read_text(encoding="utf-8")
    myst = (Path(app.outdir) / "myst.html").read_text(encoding="utf-8")
    assert _table_html(rst) == _table_html(myst)
    assert _table_html(rst)


def test_name_is_a_reachable_label(make_app, srcdir):
    app = build(make_app, srcdir)
    index = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    assert 'href="standard.html#std-table"' in index
    options = (Path(app.outdir) / "options.html").read_text(encoding="utf-8")
    assert 'id="two-backends"' in options and 'href="#two-backends"' in options
    assert ">Two backends<" in options


def test_all_tables_in_seed_order(make_app, srcdir):
    app = build(make_app, srcdir)
    kinds = [next(c for c in t.classes if c in KINDS) for t in page_tables(app, "all")]
    assert kinds == [
        "attn-priority",
        "attn-priority",
        "attn-priority",
        "attn-priority",
        "attn-legend",
        "attn-features",
        "attn-prefill",
        "attn-features",
    ]


KINDS = {"attn-priority", "attn-legend", "attn-features", "attn-prefill"}


def test_options_page(make_app, srcdir):
    app = build(make_app, srcdir)
    tables = page_tables(app, "options")
    blackwell = tables[0]
    assert blackwell.caption == "Blackwell order"
    assert [r[1] for r in blackwell.rows] == ["`FLASHINFER`", "`FLASH_ATTN`", "`TRITON_ATTN`"]
    prefill = next(t for t in tables if "attn-prefill" in t.classes)
    assert prefill.header == ["Backend", "Dtypes", "Compute Cap."]
    decode = next(t for t in tables if "wide" in t.classes)
    assert [r[0] for r in decode.rows] == ["`TRITON_MLA`"]
    two = tables[-1]
    assert two.header == ["Backend", "Version", "Non-Causal", "DCP"]
    assert [r[0] for r in two.rows] == ["`FLASH_ATTN`", "`FLASH_ATTN`", "`TRITON_ATTN`"]
    html = (Path(app.outdir) / "options.html").read_text(encoding="utf-8")
    assert '<col style="width: 15.0%" />' in html  # explicit :widths: reach the colgroup


@pytest.mark.parametrize("buildername", ["latex", "text", "man", "singlehtml"])
def test_other_builders_clean(make_app, srcdir, buildername):
    app = build(make_app, srcdir, buildername, warningiserror=True)
    assert warnings(app) == ""
    out = Path(app.outdir)
    if buildername == "text":
        text = (out / "standard.txt").read_text(encoding="utf-8")
        assert "FLASH_ATTN" in text and "FA3*" in text and "≥8.0" in text
    if buildername == "latex":
        (tex,) = out.glob("*.tex")
        body = tex.read_text(encoding="utf-8")
        assert "FA2*" in body and r"\sphinxcode" in body


def test_root_option_is_relative_to_the_page(make_app, tmp_path, srcdir):
    sub = srcdir / "sub"
    sub.mkdir()
    copy_tree(sub)
    (sub / "local.rst").write_text(
        "Local\n=====\n\n.. attention-backends-mla-decode::\n   :root: tree\n", encoding="utf-8"
    )
    (srcdir / "index.rst").write_text(
        (srcdir / "index.rst").read_text(encoding="utf-8") + "\n.. toctree::\n\n   sub/local\n",
        encoding="utf-8",
    )
    app = build(make_app, srcdir, tree=None)
    (decode,) = page_tables(app, "sub/local")
    assert [r[0] for r in decode.rows] == ["`TRITON_MLA`"]
    # the pages without :root: have no tree: one warning for the whole build
    assert warnings(app).count("attention_backends_root") == 1


def test_no_tree_anywhere_warns_once(make_app, srcdir, monkeypatch):
    from sphinxext_attn.sphinx import trees

    monkeypatch.setattr(trees, "installed_vllm_root", lambda: None)
    app = build(make_app, srcdir, tree=None)
    text = warnings(app)
    assert text.count("no vLLM source tree") == 1, text
    assert has_type(text, "attention_backends.config")
    assert "set attention_backends_root" in text
    assert "Traceback" not in text
    assert page_tables(app, "standard") == []


def test_installed_vllm_is_found_without_import(make_app, srcdir, monkeypatch):
    monkeypatch.syspath_prepend(str(MINI_TREE))
    import sys

    from sphinxext_attn.sphinx import trees

    assert trees.installed_vllm_root() == str(MINI_TREE)
    assert "vllm" not in sys.modules
    app = build(make_app, srcdir, tree=None)
    assert warnings(app) == ""
    assert page_tables(app, "standard")


def test_missing_root_option_warns_at_the_page(make_app, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["sphinxext_attn"]\n')
    (src / "index.rst").write_text(
        "Index\n=====\n\n.. attention-backends::\n   :root: nowhere\n\n"
        ".. attention-backends-legend::\n"
    )
    app = build(make_app, src, tree=None)
    text = warnings(app)
    assert "index.rst:4" in text and has_type(text, "attention_backends.root"), text
    assert "Traceback" not in text
    assert len(page_tables(app, "index")) >= 1  # the legend needs no tree


def test_priority_layouts_in_html(make_app, tmp_path):
    """``:layout: matrix`` is one table per category with a column per list; the
    default stays a table per list. Each sits in its scroll box, its title above."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["sphinxext_attn"]\n')
    body = (
        ".. attention-backends-priority::\n\n"
        ".. attention-backends-priority::\n   :layout: matrix\n"
    )
    (src / "index.rst").write_text("Index\n=====\n\n" + body)
    app = build(make_app, src)
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    tables = page_tables(app, "index")
    lists = [t for t in tables if "attn-matrix" not in t.classes]
    matrices = [t for t in tables if "attn-matrix" in t.classes]
    assert len(lists) == 4 and len(matrices) == 2
    for matrix, category in zip(matrices, ("attn-standard", "attn-mla"), strict=True):
        mine = [t for t in lists if category in t.classes]
        assert category in matrix.classes
        assert matrix.header == ["Backend", *(t.caption for t in mine)]
        for row in matrix.rows:
            for rank, table in zip(row[1:], mine, strict=True):
                names = [r[1] for r in table.rows]
                assert rank == (str(names.index(row[0]) + 1) if row[0] in names else "—")
    assert html.count('<div class="attn-scroll') == len(tables)
    assert html.count('<p class="attn-caption">') == len(tables)


KEYED_PAGE = """\
:orphan:

Keys
====

.. attention-backends-standard::
   :columns: Backend, Non-Causal, Version
"""


def test_keyed_tables(make_app, srcdir):
    """HTML only: Version sticks beside Backend where it follows it (the script that
    measures Backend is shipped and linked)."""
    (srcdir / "keys.rst").write_text(KEYED_PAGE, encoding="utf-8")
    app = build(make_app, srcdir)
    out = Path(app.outdir)
    standard = (out / "standard.html").read_text(encoding="utf-8")
    tables = re.findall(r'<table class="([^"]*)"', standard)
    assert [c for c in tables if "attn-standard" in c]
    assert all("attn-keyed" in c for c in tables if "attn-standard" in c)
    assert not [c for c in tables if "attn-keyed" in c and "attn-standard" not in c]
    assert "_static/attention_backends_tables.js" in standard
    assert (out / "_static" / "attention_backends_tables.js").is_file()
    keys = (out / "keys.html").read_text(encoding="utf-8")
    assert "attn-standard" in keys and "attn-keyed" not in keys  # Version is not second
    doctree = app.env.get_doctree("standard")
    assert not [t for t in doctree.findall(nodes.table) if "attn-keyed" in t["classes"]]
