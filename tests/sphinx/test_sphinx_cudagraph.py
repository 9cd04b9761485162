"""``:columns: CUDA Graphs`` (rST): the runtime profile shows each builder's level,
``?`` where it depends on the engine config or the GPU; the page profile, which
cannot ask builders, refuses the column."""

from __future__ import annotations

from pathlib import Path

from attn_sphinx_util import build, page_tables, warnings
from cudagraph_trees import cudagraph_tree

RST = """Index
=====

.. attention-backends-standard::
   :columns: Backend, CUDA Graphs, Sink
"""


def _site(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["sphinxext_attn"]\n')
    (src / "index.rst").write_text(RST)
    return src


def test_cudagraph_column_in_the_runtime_profile(make_app, tmp_path):
    tree = cudagraph_tree(tmp_path / "tree")
    app = build(make_app, _site(tmp_path), tree=tree, profile="runtime")
    assert "ERROR" not in warnings(app)
    (table,) = page_tables(app, "index")
    assert table.header == ["Backend", "CUDA Graphs", "Sink"]
    cells = {r[0]: r[1] for r in table.rows}
    assert cells["`ATTRIBUTE_ATTN`"] == "UNIFORM_BATCH"
    assert cells["`METHOD_ATTN`"] == "ALWAYS"
    assert cells["`SILENT_ATTN`"] == "NEVER"
    assert cells["`CONFIG_ATTN`"] == "?"
    assert cells["`IMPORT_TIME_ATTN`"] == "?"


def test_cudagraph_column_is_not_offered_by_the_page_profile(make_app, tmp_path):
    tree = cudagraph_tree(tmp_path / "tree")
    app = build(make_app, _site(tmp_path), tree=tree, profile="vllm-page")
    text = warnings(app)
    assert "ERROR" in text and "CUDA Graphs" in text and "choose from" in text
