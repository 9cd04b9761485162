"""One analysis per build, none on a clean rebuild; source edits re-read the table pages."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from attn_sphinx_util import (
    build,
    copy_root,
    copy_tree,
    counting_opens,
    has_type,
    page_tables,
    warnings,
)

from sphinxext_attn.model.key import AnalysisKey
from sphinxext_attn.sphinx import cache

BACKENDS = Path("vllm/v1/attention/backends")


def _record_reads(app) -> list[str]:
    seen: list[str] = []
    app.connect("env-before-read-docs", lambda app, env, docnames: seen.extend(docnames))
    return seen


def _rebuild(make_app, srcdir: Path, tree: Path, **kwargs):
    """A fresh app on the same source and build dirs (the env pickle is reused)."""
    app = make_app(
        "html",
        srcdir=srcdir,
        confoverrides={
            "attention_backends_root": str(tree),
            "attention_backends_profile": "vllm-page",
        },
        **kwargs,
    )
    reads = _record_reads(app)
    app.build()
    app.cleanup()
    return app, reads


TABLE_PAGES = {"standard", "myst", "all", "options"}


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    tree = copy_tree(tmp_path)
    return copy_root("basic", tmp_path), tree


def test_edit_rereads_only_table_pages_and_changes_the_cell(make_app, project):
    srcdir, tree = project
    app = build(make_app, srcdir, tree=tree)
    assert warnings(app) == ""
    heads = page_tables(app, "standard")[0]
    col = heads.header.index("Head Sizes")
    assert heads.rows[-1][col] == "64, 128, 256"

    src = tree / BACKENDS / "triton_attn.py"
    src.write_text(src.read_text().replace("[64, 128, 256]", "[64, 128]"))
    app, reads = _rebuild(make_app, srcdir, tree)
    assert set(reads) == TABLE_PAGES
    assert page_tables(app, "standard")[0].rows[-1][col] == "64, 128"


def test_noop_rebuild_opens_no_analysed_file(make_app, project):
    srcdir, tree = project
    build(make_app, srcdir, tree=tree)
    with counting_opens(tree) as opened:
        _app, reads = _rebuild(make_app, srcdir, tree)
    assert reads == []
    assert opened == {}


def test_reread_without_source_change_opens_nothing(make_app, project):
    """A page edit re-reads that page; its tables come from the env cache."""
    srcdir, tree = project
    build(make_app, srcdir, tree=tree)
    page = srcdir / "standard.rst"
    page.write_text(page.read_text() + "\nMore words.\n")
    with counting_opens(tree) as opened:
        _app, reads = _rebuild(make_app, srcdir, tree)
    assert reads == ["standard"]
    assert opened == {}


def test_thirty_pages_open_each_file_once(make_app, tmp_path):
    tree = copy_tree(tmp_path)
    srcdir = tmp_path / "src"
    srcdir.mkdir()
    (srcdir / "conf.py").write_text('extensions = ["sphinxext_attn"]\n')
    kinds = ["standard", "mla-decode", "mla-prefill", "priority", "legend", ""]
    names = [f"page{i:02d}" for i in range(30)]
    for i, name in enumerate(names):
        directive = "attention-backends" + (f"-{kinds[i % 6]}" if kinds[i % 6] else "")
        (srcdir / f"{name}.rst").write_text(f"{name}\n======\n\n.. {directive}::\n")
    (srcdir / "index.rst").write_text(
        "Index\n=====\n\n.. toctree::\n\n" + "".join(f"   {n}\n" for n in names)
    )
    with counting_opens(tree) as opened:
        app = build(make_app, srcdir, tree=tree)
    assert warnings(app) == ""
    assert opened, "the analysis read nothing?"
    assert max(opened.values()) == 1, opened
    analysed = {
        os.path.realpath(tree / f)
        for f in cache.env_cache(app.env)[AnalysisKey(str(tree), "vllm-page")][1].files
    }
    assert set(opened) <= analysed | {os.path.realpath(tree / d) for d in ()}


def test_removing_a_backend_removes_its_row_everywhere(make_app, project):
    srcdir, tree = project
    app = build(make_app, srcdir, tree=tree)
    assert any("`TRITON_ATTN`" in r for r in page_tables(app, "all")[5].rows[-1])
    registry = tree / BACKENDS / "registry.py"
    registry.write_text(
        "".join(
            line for line in registry.read_text().splitlines(True) if "TRITON_ATTN" not in line
        )
    )
    app, reads = _rebuild(make_app, srcdir, tree)
    assert set(reads) == TABLE_PAGES
    for page in TABLE_PAGES:
        features = [t for t in page_tables(app, page) if "attn-features" in t.classes]
        assert features, f"no feature table on {page}: the check below would check nothing"
        names = [row[0] for table in features for row in table.rows]
        assert not [n for n in names if "TRITON_ATTN" in n], page
        assert "`FLASH_ATTN`" in names or "`TRITON_MLA`" in names, (page, names)


def test_added_file_is_noticed(make_app, project):
    srcdir, tree = project
    registry = tree / BACKENDS / "registry.py"
    registry.write_text(
        registry.read_text().replace(
            '    CUSTOM = ""',
            '    NEW_ATTN = "vllm.v1.attention.backends.new_attn.NewBackend"\n    CUSTOM = ""',
        )
    )
    app = build(make_app, srcdir, tree=tree)
    # the missing module is reported (at info level: not strict)
    assert "new_attn" in app._status.getvalue()
    assert warnings(app) == ""
    rows = [r[0] for r in page_tables(app, "standard")[0].rows]
    assert "`NEW_ATTN`" not in rows

    (tree / BACKENDS / "new_attn.py").write_text(
        "class NewBackend:\n    supported_kv_cache_dtypes: list = ['auto']\n"
    )
    app, reads = _rebuild(make_app, srcdir, tree)
    assert set(reads) == TABLE_PAGES
    assert "`NEW_ATTN`" in [r[0] for r in page_tables(app, "standard")[0].rows]
    assert warnings(app) == ""


def test_diagnostics_once_per_build_and_suppressible(make_app, project):
    srcdir, tree = project
    registry = tree / BACKENDS / "registry.py"
    registry.write_text(
        registry.read_text().replace(
            '    CUSTOM = ""',
            '    GONE = "vllm.v1.attention.backends.gone.GoneBackend"\n    CUSTOM = ""',
        )
    )
    strict = {"attention_backends_strict": True}  # a missing module is a warning
    app = build(make_app, srcdir, tree=tree, confoverrides=strict)
    text = warnings(app)
    assert text.count("WARNING") == 1, text
    assert f"{registry}:" in text  # the analysed file (and line) is the location
    subtype = (
        cache.env_cache(app.env)[AnalysisKey(str(tree), "vllm-page")][1].diagnostics[0].subtype
    )
    assert has_type(text, f"attention_backends.{subtype}")

    quiet = tmp = srcdir.parent / "quiet"
    tmp.mkdir()
    quiet = copy_root("basic", tmp)
    app = build(
        make_app,
        quiet,
        tree=tree,
        confoverrides={**strict, "suppress_warnings": [f"attention_backends.{subtype}"]},
    )
    assert warnings(app) == ""


def _many_pages(srcdir: Path) -> None:
    for i in range(8):
        (srcdir / f"extra{i}.rst").write_text(
            f"Extra {i}\n=======\n\n.. attention-backends::\n   :name: extra-{i}\n"
        )
    (srcdir / "index.rst").write_text(
        (srcdir / "index.rst").read_text()
        + "\n.. toctree::\n\n"
        + "".join(f"   extra{i}\n" for i in range(8))
    )


def test_parallel_build_is_byte_identical(make_app, project, tmp_path):
    srcdir, tree = project
    _many_pages(srcdir)
    registry = tree / BACKENDS / "registry.py"
    registry.write_text(
        registry.read_text().replace(
            '    CUSTOM = ""',
            '    GONE = "vllm.v1.attention.backends.gone.GoneBackend"\n    CUSTOM = ""',
        )
    )
    strict = {"attention_backends_strict": True}  # a missing module is a warning
    serial = build(make_app, srcdir, tree=tree, builddir=tmp_path / "b1", confoverrides=strict)
    with counting_opens(tree) as opened:
        parallel = build(
            make_app, srcdir, tree=tree, builddir=tmp_path / "b2", parallel=2, confoverrides=strict
        )
    assert max(opened.values()) == 1
    # the one diagnostic is reported once, not once per reader process
    assert warnings(parallel).count("gone") == 1, warnings(parallel)
    assert warnings(serial).count("gone") == 1
    one, two = Path(serial.outdir), Path(parallel.outdir)
    pages = sorted(p.relative_to(one) for p in one.rglob("*.html"))
    assert len(pages) > 10
    assert pages == sorted(p.relative_to(two) for p in two.rglob("*.html"))
    for page in pages:
        assert (one / page).read_bytes() == (two / page).read_bytes(), page
