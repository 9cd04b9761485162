"""Evaluated cells explain themselves: an unknown cell is marked with its reason on
hover, and the runtime legend explains the notation (the vllm-page one stays the seed's)."""

from __future__ import annotations

from attn_sphinx_util import build, sphinx_project
from runtime_trees import runtime_backend

from sphinxext_attn.analysis.pipeline import analyze
from sphinxext_attn.render.markdown import render_markdown

TORCH_HEADS = """
@classmethod
def supports_head_size(cls, head_size):
    return torch.cuda.get_device_properties(0).major > 8
"""


def _project(tmp_path, body: str) -> object:
    page = "T\n=\n\n.. attention-backends-standard::\n   :backends: MY_ATTN\n\n"
    return sphinx_project(tmp_path, {"index": page + ".. attention-backends-legend::\n"})


def test_unknown_cell_shows_its_reason_on_hover(make_app, tmp_path):
    root = runtime_backend(tmp_path / "tree", TORCH_HEADS)
    row = next(r for r in analyze(root).backends if r.name == "MY_ATTN")
    assert "Head Sizes" in row.unknown
    app = build(
        make_app,
        _project(tmp_path, TORCH_HEADS),
        tree=root,
        confoverrides={"attention_backends_profile": "runtime"},
    )
    html = (app.outdir / "index.html").read_text()
    assert 'class="attn-unknown' in html
    assert 'title="not evaluated: call into torch' in html
    assert "Notation of evaluated cells" in html


def test_vllm_page_legend_is_the_seeds(make_app, tmp_path):
    root = runtime_backend(tmp_path / "tree", TORCH_HEADS)
    app = build(make_app, _project(tmp_path, TORCH_HEADS), tree=root)  # vllm-page
    html = (app.outdir / "index.html").read_text()
    assert "Notation of evaluated cells" not in html
    page = render_markdown(analyze(root, profile="vllm-page"))
    assert "Notation of evaluated cells" not in page
    assert "**Notation of evaluated cells:**" in render_markdown(analyze(root))
