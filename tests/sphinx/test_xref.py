"""``:attn-backend:``: rows are targets on every builder, priority lists link to them,
unknown names warn at the page and line, parallel reads merge the registry."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from attn_sphinx_util import build, copy_root, has_type, warnings

from sphinxext_attn.sphinx.provenance import backend_id
from sphinxext_attn.sphinx.xref import AttentionDomain


@pytest.fixture
def srcdir(tmp_path: Path) -> Path:
    return copy_root("xref", tmp_path)


def _html(app, docname: str) -> str:
    return (Path(app.outdir) / f"{docname}.html").read_text(encoding="utf-8")


def _links(html: str) -> set[str]:
    return set(
        re.findall(r'<a class="reference internal" href="([^"]*#attn-backend-[^"]*)"', html)
    )


def test_backend_ids():
    assert backend_id("FLASH_ATTN") == "attn-backend-flash-attn"
    assert backend_id("TRITON_MLA") == "attn-backend-triton-mla"


def test_role_resolves_in_html(make_app, srcdir):
    app = build(make_app, srcdir, warningiserror=True)
    assert warnings(app) == ""
    tables = _html(app, "tables")
    for name in ("FLASH_ATTN", "TRITON_ATTN", "FLASHINFER", "TRITON_MLA"):
        assert f'id="{backend_id(name)}"' in tables
    # FLASH_ATTN has two variant rows: only the first is the target, the second a unique id
    assert tables.count('id="attn-backend-flash-attn"') == 1
    assert 'id="attn-backend-flash-attn-2"' in tables
    refs = _links(_html(app, "refs"))
    assert "tables.html#attn-backend-flash-attn" in refs
    assert "tables.html#attn-backend-triton-mla" in refs
    assert "tables.html#attn-backend-triton-attn" in refs  # explicit title, same target
    assert re.search(r"the</span>\s*<span class=\"pre\">Triton", _html(app, "refs"))
    # MyST spelling of the role
    assert "tables.html#attn-backend-flashinfer" in _links(_html(app, "myst"))


def test_priority_entries_link_to_feature_rows(make_app, srcdir):
    app = build(make_app, srcdir)
    html = _html(app, "refs")
    priority = re.search(r'<table class="[^"]*attn-priority.*?</table>', html, flags=re.S)
    assert priority is not None
    links = _links(priority.group(0))
    assert links == {
        "tables.html#attn-backend-flash-attn",
        "tables.html#attn-backend-flashinfer",
        "tables.html#attn-backend-triton-attn",
    }


def test_index_entries(make_app, srcdir):
    app = build(make_app, srcdir)
    index = (Path(app.outdir) / "genindex.html").read_text(encoding="utf-8")
    assert "FLASH_ATTN (attention backend)" in index
    assert "tables.html#attn-backend-triton-mla" in index


def test_role_resolves_in_latex(make_app, srcdir):
    app = build(make_app, srcdir, "latex", warningiserror=True)
    assert warnings(app) == ""
    tex = (Path(app.outdir) / "xref.tex").read_text(encoding="utf-8")
    for name in ("flash-attn", "triton-mla", "flashinfer", "triton-attn"):
        assert rf"\label{{\detokenize{{tables:attn-backend-{name}}}}}" in tex
        assert rf"\hyperref[\detokenize{{tables:attn-backend-{name}}}]" in tex
    assert r"\index{FLASH\_ATTN (attention backend)" in tex


@pytest.mark.parametrize("buildername", ["text", "man", "singlehtml"])
def test_other_builders_clean(make_app, srcdir, buildername):
    app = build(make_app, srcdir, buildername, warningiserror=True)
    assert warnings(app) == ""


def test_unknown_name_warns_with_page_and_line(make_app, srcdir):
    (srcdir / "bad.rst").write_text(
        "Bad\n===\n\nThis is :attn-backend:`NO_SUCH_BACKEND`.\n", encoding="utf-8"
    )
    (srcdir / "index.rst").write_text(
        (srcdir / "index.rst").read_text(encoding="utf-8") + "   bad\n", encoding="utf-8"
    )
    app = build(make_app, srcdir)
    text = warnings(app)
    assert re.search(r"bad\.rst:4: WARNING: unknown attention backend 'NO_SUCH_BACKEND'", text)
    assert has_type(text, "attention_backends.ref")
    assert text.count("NO_SUCH_BACKEND") == 1
    assert "FLASH_ATTN" in text  # the known names are listed


def test_unknown_name_can_be_silenced(make_app, srcdir):
    (srcdir / "refs.rst").write_text(
        (srcdir / "refs.rst").read_text(encoding="utf-8") + "\n:attn-backend:`NOPE`\n",
        encoding="utf-8",
    )
    app = build(
        make_app,
        srcdir,
        confoverrides={"suppress_warnings": ["attention_backends.ref"]},
        warningiserror=True,
    )
    assert warnings(app) == ""


def test_parallel_read_merges_targets(make_app, srcdir, tmp_path):
    serial = build(make_app, srcdir)
    serial_links = {d: _links(_html(serial, d)) for d in ("refs", "myst")}
    parallel_src = copy_root("xref", tmp_path / "par")
    parallel = build(make_app, parallel_src, parallel=2)
    assert {d: _links(_html(parallel, d)) for d in ("refs", "myst")} == serial_links
    assert all(serial_links.values())


def test_domain_purge_and_merge():
    """Per-page registry entries: a re-read page drops its own, merge takes only given pages."""
    data = {"backends": {}}
    domain = AttentionDomain.__new__(AttentionDomain)
    domain.data = data  # type: ignore[misc]
    domain.note_backend("FLASH_ATTN", "b", "attn-backend-flash-attn")
    domain.note_backend("FLASH_ATTN", "a", "attn-backend-flash-attn")
    assert domain.find("FLASH_ATTN", "b") == ("b", "attn-backend-flash-attn")
    assert domain.find("FLASH_ATTN", "z") == ("a", "attn-backend-flash-attn")  # first by name
    domain.clear_doc("a")
    domain.clear_doc("b")
    assert domain.find("FLASH_ATTN", "a") is None and data["backends"] == {}
    other = {"backends": {"X": {"p": "attn-backend-x", "q": "attn-backend-x"}}}
    domain.merge_domaindata(["p"], other)
    assert data["backends"] == {"X": {"p": "attn-backend-x"}}
