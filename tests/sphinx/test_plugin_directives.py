"""``attention_backends_plugins`` in conf.py: a plugin's platform named wherever a
platform is (the priority directive's rules, the select directive, the feature
tables), on the demo tree with a vllm-gaudi-shaped plugin (tests/plugin_trees.py)."""

from __future__ import annotations

import re
from pathlib import Path

from attn_sphinx_util import build, warnings
from plugin_trees import gaudi_plugin
from treebuilder import DEMO_TREE

PAGE = """Gaudi
=====

Rules
-----

.. attention-backends-priority::
   :platform: hpu

An MLA layer
------------

.. attention-backends-select::
   :platform: hpu
   :mla:

Features
--------

.. attention-backends-standard::
   :platform: hpu

Selector
--------

.. attention-backends-selector::
   :platforms: hpu
"""


def _build(make_app, tmp_path: Path, plugins: str, **kwargs):  # type: ignore[no-untyped-def]
    src = tmp_path / "src"
    src.mkdir(parents=True)
    (src / "conf.py").write_text(
        f'extensions = ["sphinxext_attn"]\nattention_backends_plugins = {plugins}\n'
    )
    (src / "index.rst").write_text(PAGE)
    app = build(make_app, src, "text", tree=DEMO_TREE, profile=None, **kwargs)
    text = (Path(app.outdir) / "index.txt").read_text(encoding="utf-8")
    return " ".join(text.split()), warnings(app)


def test_a_plugins_platform_in_the_directives(make_app, tmp_path):
    gaudi_plugin(tmp_path / "vllm-gaudi")
    text, warned = _build(make_app, tmp_path, "['../vllm-gaudi']")  # relative to conf.py
    # the rules (a text table wraps "CUSTOM (class)" in its cell)
    assert '"use_mla" | "CUSTOM | | | | (HPUMLAAttentionBackend)"' in text
    picked = 'vLLM picks "CUSTOM", the class "vllm_gaudi.attention.backends.hpu_attn.'
    assert picked + 'HPUMLAAttentionBackend".' in text
    assert "| 128 | not declared§ |" in text  # block sizes declared, head sizes not
    assert "Dtypes: not declared by the plugin's class; vLLM then assumes" in text
    assert "CUDA Graph" not in text  # a table of the page command's platform section
    assert "WARNING" not in warned and "ERROR" not in warned, warned


def test_a_platform_without_its_plugin_is_one_error(make_app, tmp_path):
    text, warned = _build(make_app, tmp_path, "[]")
    assert warned.count("give one of cuda, rocm, xpu, cpu, tpu (a plugin's platform") == 3
    bad_text, bad = _build(make_app, tmp_path / "second", "['no-such-plugin-folder']")
    assert "attention_backends_plugins: no-such-plugin-folder: not a folder" in bad


FEATURES_PAGE = """Gaudi
=====

.. attention-backends-standard::
   :platform: hpu
"""


def test_a_rebuild_with_other_plugin_folders_reads_them(make_app, tmp_path):
    """The analyses kept on the environment are keyed by the plugins read too: the
    same root and platform with another plugin folder is analysed again, not taken
    from the build before (whose plugin files lie outside the root it checks)."""
    gaudi_plugin(tmp_path / "gaudi-a")
    other = gaudi_plugin(tmp_path / "gaudi-b") / "vllm_gaudi/v1/attention/backends/hpu_attn.py"
    other.write_text(other.read_text(encoding="utf-8").replace("[128]", "[64]"), "utf-8")
    src = tmp_path / "src"
    src.mkdir()
    (src / "index.rst").write_text(FEATURES_PAGE)
    cells = []
    for folder in ("gaudi-a", "gaudi-b", "gaudi-a"):
        (src / "conf.py").write_text(
            f'extensions = ["sphinxext_attn"]\nattention_backends_plugins = ["../{folder}"]\n'
        )
        app = build(make_app, src, "text", tree=DEMO_TREE, profile=None)
        text = (Path(app.outdir) / "index.txt").read_text(encoding="utf-8")
        cells.append(re.findall(r"\| (128|64) +\|", text))  # the Block Sizes cell
        assert "WARNING" not in warnings(app), warnings(app)
    assert cells == [["128"], ["64"], ["128"]]
