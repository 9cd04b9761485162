"""Every cell knows the file and line it was read from, and the docs show it.

On vLLM 0.33.0 the recorded line must hold the expression the cell was
derived from: ``MultipleOf(16)`` or the numbers for block sizes, the
``DeviceCapability``/``.major`` comparison for compute capability, the list
of dtype strings for KV cache dtypes.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest
from attn_sphinx_util import MINI_TREE, build, copy_root, has_type, warnings
from treebuilder import analyze_page
from vllm_trees import tree

from sphinxext_attn.model.records import Analysis, BackendFeatures, Location
from sphinxext_attn.render.markdown import render_markdown

#: backends whose three cells are checked by name (the issue asks for five or more)
SAMPLES = (
    "TRITON_ATTN",
    "FLASHINFER_MLA",
    "CUTLASS_MLA",
    "FLASHMLA",
    "FLASH_ATTN_MLA",
    "CPU_ATTN",
)


@functools.cache
def _analysis(version: str) -> tuple[Path, Analysis]:
    root = tree(version)
    return root, analyze_page(root)


def _line(root: Path, loc: Location) -> str:
    return (root / loc.path).read_text(encoding="utf-8").splitlines()[loc.line - 1]


def _expression(root: Path, loc: Location) -> str:
    """The statement that starts at the recorded line (lists span several lines)."""
    lines = (root / loc.path).read_text(encoding="utf-8").splitlines()[loc.line - 1 :]
    for end in range(1, min(len(lines), 200) + 1):
        text = "\n".join(lines[:end]).strip()
        try:
            ast.parse(text.removeprefix("return ").split("=", 1)[-1].strip() or "None")
        except SyntaxError:
            continue
        return text
    raise AssertionError(f"no expression starts at {loc}")


def check_block_sizes(root: Path, row: BackendFeatures) -> None:
    line = _line(root, row.sources["Block Sizes"])
    for size in row.block_sizes:
        expected = f"MultipleOf({size[1:]})" if size.startswith("%") else size
        assert expected in line, (row.name, size, line)


def check_compute_capability(root: Path, row: BackendFeatures) -> None:
    line = _line(root, row.sources["Compute Cap."])
    assert "DeviceCapability" in line or ".major" in line, (row.name, line)
    for number in re.findall(r"\d+", row.compute_capability.replace(".x", "")):
        assert number in line, (row.name, row.compute_capability, line)


def check_kv_dtypes(root: Path, row: BackendFeatures) -> None:
    expression = _expression(root, row.sources["KV Dtypes"])
    for dtype in row.kv_cache_dtypes:
        assert f'"{dtype}"' in expression or f"'{dtype}'" in expression, (row.name, dtype)


@pytest.mark.realtree
@pytest.mark.parametrize("name", SAMPLES)
def test_sample_cells_point_at_their_expression(name):
    root, analysis = _analysis("0.33.0")
    (row,) = [r for r in analysis.backends if r.name == name]
    check_block_sizes(root, row)
    check_kv_dtypes(root, row)
    if row.compute_capability != "Any" and not row.name.startswith("CPU_"):
        check_compute_capability(root, row)


@pytest.mark.realtree
def test_every_located_cell_on_0_33_holds_its_expression():
    """Beyond the samples: every unversioned row with a located cell of those three kinds."""
    root, analysis = _analysis("0.33.0")
    checked = 0
    for row in analysis.backends:
        if row.version:
            continue  # variant cells point at the version choice, checked below
        if "Block Sizes" in row.sources and row.block_sizes:
            check_block_sizes(root, row)
            checked += 1
        if "KV Dtypes" in row.sources:
            check_kv_dtypes(root, row)
            checked += 1
        if "Compute Cap." in row.sources and row.compute_capability not in ("Any", "N/A"):
            check_compute_capability(root, row)
            checked += 1
    assert checked >= 60


@pytest.mark.realtree
def test_variant_cells_point_at_the_version_choice():
    root, analysis = _analysis("0.33.0")
    rows = {r.version: r for r in analysis.backends if r.name == "FLASH_ATTN"}
    assert _line(root, rows["FA3*"].sources["Compute Cap."]).strip() == "fa_version = 3"
    assert "def flash_attn_supports_sinks" in _line(root, rows["FA3*"].sources["Sink"])
    assert "DeviceCapability(8, 0)" in _line(root, rows["FA2*"].sources["Compute Cap."])


@pytest.mark.realtree
def test_flags_and_attention_types_point_at_the_return():
    root, analysis = _analysis("0.33.0")
    (triton,) = [r for r in analysis.backends if r.name == "TRITON_ATTN"]
    assert _line(root, triton.sources["Sink"]).strip() == "return True"
    assert "attn_type in" in _line(root, triton.sources["Attention Types"])


def test_markdown_has_no_links_by_default_and_links_on_request():
    analysis = analyze_page(MINI_TREE)
    plain = render_markdown(analysis)
    assert "](" not in plain.partition("## Backend Priority (CUDA)")[2]
    linked = render_markdown(analysis, links="https://src/{path}#L{line}")
    assert re.search(
        r"\| \[`TRITON_ATTN`\]\(https://src/vllm/v1/attention/backends/triton_attn\.py#L2\)",
        linked,
    )
    assert "[64, 128, 256](https://src/vllm/v1/attention/backends/triton_attn.py#L8)" in linked


@pytest.fixture
def srcdir(tmp_path: Path) -> Path:
    return copy_root("xref", tmp_path)


def test_html_tooltips_without_a_url(make_app, srcdir):
    app = build(make_app, srcdir, warningiserror=True)
    html = (Path(app.outdir) / "tables.html").read_text(encoding="utf-8")
    assert (
        '<span class="attn-src" title="vllm/v1/attention/backends/triton_attn.py:8">64, 128, 256'
        in html
    )
    assert "attn-src reference external" not in html


def test_html_links_with_a_url_template(make_app, srcdir):
    template = "https://example.org/vllm/blob/v{version}/{path}#L{line}"
    app = build(
        make_app,
        srcdir,
        confoverrides={"attention_backends_source_url": template},
        warningiserror=True,
    )
    html = (Path(app.outdir) / "tables.html").read_text(encoding="utf-8")
    assert (
        '<a class="attn-src reference external" '
        'href="https://example.org/vllm/blob/v/vllm/v1/attention/backends/triton_attn.py#L8" '
        'title="vllm/v1/attention/backends/triton_attn.py:8">64, 128, 256</a>'
    ) in html


def test_bad_config_template_is_a_config_error(make_app, srcdir):
    app = build(
        make_app, srcdir, confoverrides={"attention_backends_source_url": "https://x/{file}"}
    )
    text = warnings(app)
    assert text.count("attention_backends_source_url = 'https://x/{file}' is not valid") == 1
    assert "ERROR" in text and has_type(text, "attention_backends.config")


@pytest.mark.parametrize("field", ["{file}", "{line[0]}", "{path.x}"])
def test_bad_directive_template_warns_once(make_app, srcdir, field):
    """An unknown field, or an index or attribute of a known one (a TypeError and an
    AttributeError from ``str.format``), is one warning and no link."""
    (srcdir / "tables.rst").write_text(
        f"Tables\n======\n\n.. attention-backends-standard::\n   :source-url: https://x/{field}\n\n"
        f".. attention-backends-mla-decode::\n   :source-url: https://x/{field}\n"
    )
    app = build(make_app, srcdir)
    text = warnings(app)
    assert text.count("attention_backends_source_url") == 1, text
    assert has_type(text, "attention_backends.config")


@pytest.mark.parametrize("buildername", ["latex", "text", "man"])
def test_other_builders_show_plain_text(make_app, srcdir, buildername):
    app = build(make_app, srcdir, buildername, warningiserror=True)
    assert warnings(app) == ""
    out = "".join(
        p.read_text(encoding="utf-8")
        for p in Path(app.outdir).rglob("*.*")
        if p.suffix in (".tex", ".txt", ".1")
    )
    assert "64, 128, 256" in out
    assert "triton_attn.py:8" not in out


def test_directive_source_url_overrides_the_config(make_app, srcdir):
    (srcdir / "tables.rst").write_text(
        "Tables\n======\n\n.. attention-backends-standard::\n   :source-url: none\n\n"
        ".. attention-backends-mla-decode::\n   :source-url: local/{path}?{line}\n",
        encoding="utf-8",
    )
    app = build(
        make_app,
        srcdir,
        confoverrides={"attention_backends_source_url": "https://example.org/{path}"},
        warningiserror=True,
    )
    html = (Path(app.outdir) / "tables.html").read_text(encoding="utf-8")
    assert "https://example.org/" not in html
    assert '<span class="attn-src" title="vllm/v1/attention/backends/triton_attn.py:8">' in html
    assert 'href="local/vllm/v1/attention/backends/mla/' in html
