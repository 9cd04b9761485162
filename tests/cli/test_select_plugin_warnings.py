"""``select`` with a plugin prints the warnings about the plugin's files it met
while answering (a sampled mutation run, seed 59, found them unpinned: with the
plugin's check negated they were dropped), and none about vLLM's own files."""

from __future__ import annotations

from plugin_trees import gaudi_plugin
from treebuilder import DEMO_TREE

from sphinxext_attn.cli.main import main

MLA_CLASS = "vllm_gaudi.attention.backends.hpu_attn.HPUMLAAttentionBackend"
WARNING = (
    "warning: vllm_gaudi/platform.py: HPUMLA: class path 'habana.attn.HPUMLA' "
    "is outside the vllm package and its plugins"
)


def test_a_plugin_class_path_outside_both_trees_is_a_warning(tmp_path, capsys):
    plugin = gaudi_plugin(tmp_path / "plugin")
    platform = plugin / "vllm_gaudi/platform.py"
    text = platform.read_text(encoding="utf-8")
    platform.write_text(text.replace(MLA_CLASS, "habana.attn.HPUMLA"), encoding="utf-8")
    argv = ["select", "--root", str(DEMO_TREE), "--plugin", str(plugin), "--platform", "hpu"]
    assert main([*argv, "--no-cache", "--mla"]) == 0
    captured = capsys.readouterr()
    assert "selected: HPUMLA\n" in captured.out
    assert captured.err.splitlines() == [WARNING]
    assert main([*argv, "--no-cache"]) == 0  # the MLA class is not met: no warning
    assert capsys.readouterr().err == ""
