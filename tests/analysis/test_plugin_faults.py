"""The fault model extended to plugins: a link out of the plugin's folder, a syntax
error, a missing module, a class path outside both trees. Each is a warning naming
the file, and every other table is built (vLLM's page, the platform's rules, the
plugin's other rows); nothing outside the named folders is read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from plugin_trees import gaudi_plugin
from treebuilder import DEMO_TREE

from sphinxext_attn.cli.main import main
from sphinxext_attn.source.plugin_platforms import read_plugins

MLA_FILE = "vllm_gaudi/attention/backends/hpu_attn.py"
MLA_CLASS = "vllm_gaudi.attention.backends.hpu_attn.HPUMLAAttentionBackend"


def _damage(plugin: Path, kind: str, outside: Path) -> None:
    mla = plugin / MLA_FILE
    if kind == "symlink":
        secret = outside / "secret.py"
        secret.write_text(mla.read_text(encoding="utf-8"), encoding="utf-8")
        mla.unlink()
        os.symlink(secret, mla)
    elif kind == "package_link":  # the module a package whose folder links out
        package = outside / "hpu_attn"
        package.mkdir()
        (package / "__init__.py").write_text(mla.read_text(encoding="utf-8"), encoding="utf-8")
        mla.unlink()
        os.symlink(package, mla.with_suffix(""), target_is_directory=True)
    elif kind == "syntax":
        mla.write_text(mla.read_text(encoding="utf-8") + "\ndef broken(:\n", encoding="utf-8")
    elif kind == "missing":
        mla.unlink()
    elif kind == "outside":
        platform = plugin / "vllm_gaudi/platform.py"
        text = platform.read_text(encoding="utf-8")
        platform.write_text(text.replace(MLA_CLASS, "habana.attn.HPUMLA"), encoding="utf-8")


EXPECTED = {
    "symlink": f"warning: {MLA_FILE}: HPUMLAAttentionBackend: class path '{MLA_CLASS}' "
    "resolves outside the plugin's folder",
    # the package's folder is looked in only when no module file is found; the warning
    # names the file behind the link, not the module file that is not there
    "package_link": f"warning: {MLA_FILE[:-3]}/__init__.py: HPUMLAAttentionBackend: "
    f"class path '{MLA_CLASS}' resolves outside the plugin's folder",
    "syntax": f"warning: {MLA_FILE}:LINE: syntax error: invalid syntax",
    "missing": f"warning: vllm_gaudi/platform.py:17: HPUMLAAttentionBackend: module file "
    f"{MLA_FILE} not found",
    "outside": "warning: vllm_gaudi/platform.py:17: HPUMLA: class path 'habana.attn.HPUMLA' "
    "is outside the vllm package and its plugins",
}


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_plugin_fault_warns_and_builds_the_rest(tmp_path, capsys, kind):
    plugin = gaudi_plugin(tmp_path / "plugin")
    outside = tmp_path / "outside"
    outside.mkdir()
    _damage(plugin, kind, outside)
    page = tmp_path / "page.md"
    args = ["--root", str(DEMO_TREE), "--plugin", str(plugin), "--platform", "hpu"]
    assert main([*args, "-o", str(page), "--no-cache"]) == 0
    err = capsys.readouterr().err
    if kind == "syntax":
        lines = (plugin / MLA_FILE).read_text(encoding="utf-8").splitlines()
        line = lines.index("def broken(:") + 1
    expected = EXPECTED[kind].replace("LINE", str(line)) if kind == "syntax" else EXPECTED[kind]
    assert expected in err.splitlines(), err
    assert "Traceback" not in err
    text = page.read_text(encoding="utf-8")
    assert "## Standard Attention (MHA, MQA, GQA) Backends\n" in text  # vLLM's page
    assert "| 1 | `use_mla` |" in text and "| 2 | `otherwise` |" in text  # the rules
    feature_rows = [line for line in text.splitlines() if "| not declared |" in line]
    # the intact class's row (named CUSTOM alone when no other class shares the name)
    assert feature_rows[0].startswith(("| `CUSTOM` |", "| `CUSTOM (HPUAttentionBackendV1)` |"))
    if kind != "syntax":  # the damaged class has no row (a syntax error elsewhere keeps it)
        assert not any("HPUMLA" in line for line in feature_rows)


def test_no_file_outside_the_named_folders_is_read(tmp_path, monkeypatch):
    """The plugin's tree reads through its own root: a link out is refused."""
    from sphinxext_attn.source.tree import SourceTree

    plugin = gaudi_plugin(tmp_path / "plugin")
    _damage(plugin, "symlink", tmp_path)
    tree = SourceTree(DEMO_TREE, plugins=read_plugins(DEMO_TREE, [str(plugin)]))
    assert tree.root_of(MLA_FILE) == plugin.resolve()
    assert tree.is_outside(MLA_FILE) and tree.text(MLA_FILE) is None
    assert not tree.exists("vllm_gaudi/../../outside/secret.py")


def test_select_warns_of_a_plugin_class_path_outside_both_trees(tmp_path, capsys):
    """``select`` prints the warnings about the plugin's files it met answering,
    naming the file that gave the path (a negated plugin check dropped them; the
    file was dropped when the rule's method was taken for an unbound one), and none
    when the damaged class is not met."""
    plugin = gaudi_plugin(tmp_path / "plugin")
    _damage(plugin, "outside", tmp_path)
    argv = ["select", "--root", str(DEMO_TREE), "--plugin", str(plugin), "--platform", "hpu"]
    assert main([*argv, "--no-cache", "--mla"]) == 0
    captured = capsys.readouterr()
    assert "selected: HPUMLA\n" in captured.out
    assert captured.err.splitlines() == [
        "warning: vllm_gaudi/platform.py: HPUMLA: class path 'habana.attn.HPUMLA' "
        "is outside the vllm package and its plugins"
    ]
    assert main([*argv, "--no-cache"]) == 0  # the MLA class is not met: no warning
    assert capsys.readouterr().err == ""
