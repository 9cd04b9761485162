"""``attention-backends-diff`` between the two readings of one tree: where vLLM's own
page and the code disagree, with the line that decides each runtime cell."""

from __future__ import annotations

import re

import pytest
import vllm_trees
from attn_sphinx_util import build, warnings

pytestmark = pytest.mark.realtree

PAGE = """Disagreements
=============

.. attention-backends-diff::
   :from-profile: vllm-page
   :backends: B12X, FLASHMLA
"""


def test_page_versus_code_on_one_tree(make_app, tmp_path):
    tree = vllm_trees.tree("0.33.0")
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["sphinxext_attn"]\n')
    (src / "index.rst").write_text(PAGE)
    app = build(make_app, src, tree=tree, confoverrides={"attention_backends_profile": "runtime"})
    assert "attention-backends-diff" not in warnings(app)
    html = (app.outdir / "index.html").read_text()
    assert "(vllm-page) to 0.33.0" in html and "Decided at" in html
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", html, re.DOTALL)
    b12x_cap = [r for r in rows if "B12X" in r and "Compute Cap." in r]
    assert len(b12x_cap) == 1
    assert "Any" in b12x_cap[0] and "12.x" in b12x_cap[0]  # major == 12: not 13.0
    # the deciding line is a method of the class, shown as a tooltip without a source URL
    assert 'title="vllm/v1/attention/backends/b12x.py:' in b12x_cap[0]
    flashmla_heads = [r for r in rows if "FLASHMLA" in r and "Head Sizes" in r]
    assert "vllm/model_executor/layers/attention/mla_attention.py:" in flashmla_heads[0]


def test_from_or_profile_is_required(make_app, tmp_path):
    tree = vllm_trees.tree("0.33.0")
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["sphinxext_attn"]\n')
    (src / "index.rst").write_text("X\n=\n\n.. attention-backends-diff::\n")
    app = build(make_app, src, tree=tree)
    assert ":from-profile:" in warnings(app)
