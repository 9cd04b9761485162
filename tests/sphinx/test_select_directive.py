"""``attention-backends-select``: vLLM's decision as a table, in rST and MyST, on
every builder, equal to the command line's decision on a real release."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import vllm_trees
from attn_sphinx_util import build, sphinx_project, warnings

pytestmark = pytest.mark.realtree

RST = """Select
======

.. attention-backends-select::
   :capability: {capability}
   :dtype: {dtype}
   :kv-cache-dtype: {kv}
   :head-size: {head}
{extra}
"""

MYST = """# Select

```{{attention-backends-select}}
:capability: {capability}
:dtype: {dtype}
:kv-cache-dtype: {kv}
:head-size: {head}
{extra}
```
"""


def _project(tmp_path: Path, page: str, suffix: str = ".rst", myst: bool = False) -> Path:
    extensions = ("sphinxext_attn", "myst_parser") if myst else ("sphinxext_attn",)
    return sphinx_project(tmp_path, {f"index{suffix}": page}, extensions=extensions)


def _cli(tree: Path, *args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "sphinxext_attn", "select", "--root", str(tree), *args]
        + ["--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def _selected_rows(html: str) -> list[str]:
    import re

    return re.findall(r'<tr class="[^"]*attn-selected[^"]*">(.*?)</tr>', html, re.DOTALL)


@pytest.mark.parametrize("syntax", ["rst", "myst"])
def test_decision_table_equals_the_command_line(make_app, tmp_path, syntax):
    if syntax == "myst":
        pytest.importorskip("myst_parser")
    tree = vllm_trees.tree("0.33.0")
    fields = {"capability": "9.0", "dtype": "bf16", "kv": "fp8", "head": "256"}
    extra = "   :mla:\n" if syntax == "rst" else ":mla:\n"
    template = RST if syntax == "rst" else MYST
    page = template.format(extra=extra, **fields)
    src = _project(tmp_path, page, ".rst" if syntax == "rst" else ".md", myst=syntax == "myst")
    app = build(make_app, src, tree=tree, confoverrides={"attention_backends_profile": "runtime"})
    assert "attention-backends-select" not in warnings(app)
    html = (app.outdir / "index.html").read_text()
    expected = _cli(
        tree, "--capability", "9.0", "--dtype", "bf16", "--kv-cache-dtype", "fp8",
        "--head-size", "256", "--mla",
    )  # fmt: skip
    assert expected["selected"]
    chosen = _selected_rows(html)
    assert len(chosen) == 1 and expected["selected"] in chosen[0]
    for name in expected["priorities"]:
        assert name in html
    first_rejected, reasons = next(iter(expected["rejected"].items()))
    assert reasons[0] in html
    # reasons carry where vLLM states them (a tooltip without a source URL)
    assert 'title="vllm/v1/attention/backend.py:' in html
    # HTML: the decision's box stacks each row's reasons under its backend when narrow
    assert re.search(
        r'<div class="attn-scroll attn-scroll-stack[^"]*">\s*<table[^>]*attn-select', html
    )


def test_nothing_qualifies_says_vllm_raises(make_app, tmp_path):
    tree = vllm_trees.tree("0.33.0")
    page = RST.format(capability="7.0", dtype="fp32", kv="fp8", head="1000", extra="   :mla:\n")
    app = build(make_app, _project(tmp_path, page), tree=tree)
    html = (app.outdir / "index.html").read_text()
    assert "No backend qualifies" in html and not _selected_rows(html)


@pytest.mark.parametrize("builder", ["latex", "text", "man", "texinfo", "singlehtml", "epub"])
def test_every_builder(make_app, tmp_path, builder):
    tree = vllm_trees.tree("0.33.0")
    page = RST.format(capability="10.0", dtype="fp16", kv="auto", head="128", extra="")
    app = build(make_app, _project(tmp_path, page), builder, tree=tree)
    assert "Traceback" not in warnings(app)
    text = "".join(
        p.read_text(errors="replace") for p in Path(app.outdir).rglob("*") if p.is_file()
        and p.suffix in (".tex", ".txt", ".1", ".texi", ".html", ".xhtml")
    )  # fmt: skip
    assert "FLASHINFER" in text


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("capability", "hopper", "not a compute capability"),
        ("dtype", "int4", "choose from fp16"),
        ("attn-type", "sideways", "choose from decoder"),
        ("head-size", "0", "not a positive integer"),
        ("head-size", "-3", "not a positive integer"),
        ("kv-cache-dtype", "bogus", "not a KV cache dtype of this release; choose from auto"),
    ],
)
def test_bad_options_name_the_allowed_values(make_app, tmp_path, option, value, message):
    tree = vllm_trees.tree("0.33.0")
    page = f"Select\n======\n\n.. attention-backends-select::\n   :{option}: {value}\n"
    app = build(make_app, _project(tmp_path, page), tree=tree)
    assert message in warnings(app)


def test_both_readings_and_a_decision_open_each_file_once(make_app, tmp_path):
    """A page with the two profiles side by side and a decision: one open per file."""
    from attn_sphinx_util import counting_opens

    tree = vllm_trees.tree("0.33.0")
    page = RST.format(capability="9.0", dtype="bf16", kv="auto", head="128", extra="")
    page += "\n.. attention-backends-diff::\n   :from-profile: vllm-page\n"
    src = _project(tmp_path, page)
    with counting_opens(tree) as opened:
        build(make_app, src, tree=tree, confoverrides={"attention_backends_profile": "runtime"})
    assert opened, "the build read the tree"
    assert max(opened.values()) == 1, {p: n for p, n in opened.items() if n > 1}


@pytest.mark.parametrize(("capability", "version"), [("9.0", 3), ("8.0", 2)])
def test_the_flash_attention_version_is_named(make_app, tmp_path, capability, version):
    """As in ``select``'s text: the pick runs FlashAttention N (the release's
    ``get_flash_attn_version`` for that GPU); every backend has one label."""
    tree = vllm_trees.tree("0.33.0")
    page = RST.format(capability=capability, dtype="bf16", kv="auto", head="128", extra="")
    app = build(make_app, _project(tmp_path, page), tree=tree)
    html = (app.outdir / "index.html").read_text()
    expected = _cli(tree, "--capability", capability)
    assert expected["selected"] == "FLASH_ATTN" and expected["flash_attn_version"] == version
    assert f"which runs FlashAttention {version}" in html
    assert set(expected["labels"]) == set(expected["priorities"])
    assert "valid, lower priority" in expected["labels"].values()


def test_a_backend_asked_for_says_what_vllm_does_with_it(make_app, tmp_path):
    """``:backend:`` asks as ``--attention-backend`` does: a refusal shows vLLM's
    message and reasons, as ``select --backend`` answers."""
    tree = vllm_trees.tree("0.33.0")
    extra = "   :backend: FLASHINFER\n"
    page = RST.format(capability="9.0", dtype="bf16", kv="auto", head="100", extra=extra)
    app = build(make_app, _project(tmp_path, page), tree=tree)
    html = (app.outdir / "index.html").read_text()
    expected = _cli(
        tree, "--capability", "9.0", "--dtype", "bf16", "--kv-cache-dtype", "auto",
        "--head-size", "100", "--backend", "FLASHINFER",
    )  # fmt: skip
    assert expected["selected"] is None and expected["rejected"]["FLASHINFER"]
    assert "Requested: FLASHINFER: vLLM refuses it" in html
    for reason in expected["rejected"]["FLASHINFER"]:
        assert reason in html
    assert "is not valid for this configuration" in html and not _selected_rows(html)
    bad = RST.format(
        capability="9.0", dtype="bf16", kv="auto", head="128", extra="   :backend: NOPE\n"
    )
    app = build(make_app, _project(tmp_path / "bad", bad), tree=tree)
    assert ":backend: 'NOPE' is not a backend of this release; choose from FLASH_ATTN" in warnings(
        app
    )


@pytest.mark.parametrize("syntax", ["rst", "myst"])
def test_what_would_change_the_pick_is_the_command_lines(make_app, tmp_path, syntax):
    """``:alternatives:`` lists what ``select`` lists (GPT-OSS-like sinks, head size 64,
    on 10.0: FlashInfer's cubins installed would make vLLM pick FLASHINFER); without
    the option none is asked for (each one evaluates the tree again)."""
    tree = vllm_trees.tree("0.33.0")
    template, suffix = (RST, ".rst") if syntax == "rst" else (MYST, ".md")
    extra = "   :sink:\n   :alternatives:\n" if syntax == "rst" else ":sink:\n:alternatives:"
    page = template.format(capability="10.0", dtype="bf16", kv="auto", head="64", extra=extra)
    project = _project(tmp_path, page, suffix, myst=syntax == "myst")
    html = (build(make_app, project, tree=tree).outdir / "index.html").read_text()
    expected = _cli(
        tree, "--capability", "10.0", "--dtype", "bf16", "--kv-cache-dtype", "auto",
        "--head-size", "64", "--sink",
    )  # fmt: skip
    from sphinxext_attn.render.select_text import alternative_parts

    wanted = [alternative_parts(a) for a in expected["alternatives"]]
    assert ("--env VLLM_HAS_FLASHINFER_CUBIN=1", "FLASHINFER") in wanted
    assert "What would change the pick:" in html
    for flags, pick in wanted:
        assert 'With <code class="docutils literal notranslate"><span class="pre">' in html
        assert flags.split()[-1] in html and f"{pick}</span></code>" in html
    plain = template.format(
        capability="10.0", dtype="bf16", kv="auto", head="64",
        extra="   :sink:\n" if syntax == "rst" else ":sink:",
    )  # fmt: skip
    project = _project(tmp_path / "plain", plain, suffix, myst=syntax == "myst")
    html = (build(make_app, project, tree=tree).outdir / "index.html").read_text()
    assert "What would change the pick" not in html
