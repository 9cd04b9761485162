"""``attention-backends-select`` with ``:model-config:`` (relative to the source
file): one decision table per layer kind on a small invented tree."""

from __future__ import annotations

import json
from pathlib import Path

from attn_sphinx_util import build, copy_tree, sphinx_project, warnings
from fixtures import TINY, model_files
from treebuilder import DEMO_TREE, write_files

PAGE = """Model
=====

.. attention-backends-select::
   :model-config: models/tiny
   :capability: 9.0
{extra}
"""


def _build(make_app, tmp_path: Path, extra: str = ""):
    tree = copy_tree(tmp_path, DEMO_TREE)  # a platform with a selection
    write_files(tree, dict(model_files()))
    src = sphinx_project(tmp_path, {"index": PAGE.format(extra=extra)})
    (src / "models" / "tiny").mkdir(parents=True)
    (src / "models" / "tiny" / "config.json").write_text(json.dumps(TINY))
    app = build(make_app, src, tree=tree, profile="runtime")
    return app, (Path(app.outdir) / "index.html").read_text(encoding="utf-8")


def test_one_table_per_layer_kind(make_app, tmp_path: Path):
    app, html = _build(make_app, tmp_path)
    assert "TinyForCausalLM: vLLM builds vllm.model_executor.models.tiny.TinyForCausalLM." in html
    assert "2 layers: head size 64, decoder, sinks, sliding window" in html
    assert "1 layer: head size 64, decoder, sinks" in html
    assert html.count('class="attn-select') >= 2
    assert ":model-config:" not in warnings(app)


def test_an_option_that_does_not_apply_is_an_error(make_app, tmp_path: Path):
    app, _ = _build(make_app, tmp_path, "   :block-size: 16")
    assert ":block-size: does not apply with :model-config:" in warnings(app)
