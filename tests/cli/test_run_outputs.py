"""Where a run's results go: the tree's page by default, a private cache folder made
by the first entry kept, the old tree's reading that a diff keeps for a later run,
and the flags a select run on another platform says it left at their defaults.
Each test fails with the sampled mutant it names."""

from __future__ import annotations

import importlib
import json
import os
import shutil
from pathlib import Path

from treebuilder import DEMO_OLD_TREE, DEMO_TREE

from sphinxext_attn.cli.main import DEFAULT_OUTPUT, main
from sphinxext_attn.cli.pagefile import output_path
from sphinxext_attn.cli.runcache import RunCache

pipeline_module = importlib.import_module("sphinxext_attn.analysis.pipeline")


def test_a_page_run_without_o_writes_the_trees_page(tmp_path, capsys):
    """No ``-o`` and no ``--diff``: the tree's own page file, nothing on stdout
    (``output is None and diff`` -> ``or`` printed the page instead)."""
    tree = tmp_path / "tree"
    shutil.copytree(DEMO_TREE, tree)
    page = tree / DEFAULT_OUTPUT
    assert not page.exists()
    assert main(["--root", str(tree), "--no-cache"]) == 0
    assert capsys.readouterr().out == f"Generated: {page}\n"
    assert page.read_text(encoding="utf-8").startswith("#")
    assert output_path(None, None, tree, "p.md") == tree / "p.md"
    assert output_path(None, str(DEMO_OLD_TREE), tree, "p.md") is None
    assert output_path("-", None, tree, "p.md") is None
    assert output_path("x.md", str(DEMO_OLD_TREE), tree, "p.md") == Path("x.md")


def test_the_first_entry_kept_makes_a_private_cache_folder(tmp_path):
    """An entry stored before any copy of a file is kept makes the folder itself,
    readable by its owner alone (mode 0o700 -> 0o701 let others enter it). The
    umask is cleared so that only the mode asked for decides the bits."""
    cache = tmp_path / "cache"
    old = os.umask(0)
    try:
        RunCache(cache).store("analysis", DEMO_TREE, {}, {"kept": 1}, [])
    finally:
        os.umask(old)
    assert oct(cache.stat().st_mode & 0o777) == "0o700"
    assert RunCache(cache).load("analysis", DEMO_TREE, {}) == {"kept": 1}


def test_a_diff_keeps_the_old_trees_reading_for_a_json_run_of_it(tmp_path, monkeypatch, capsys):
    """A diff reads the old tree with its deciding lines, as a JSON page run does,
    so that run is answered from the cache (``provenance`` True -> False in
    ``write_diff`` kept it under another key and analysed the tree again)."""
    new, old, cache = tmp_path / "new", tmp_path / "old", tmp_path / "cache"
    shutil.copytree(DEMO_TREE, new)
    shutil.copytree(DEMO_OLD_TREE, old)
    argv = ["--root", str(new), "--diff", str(old), "--cache-dir", str(cache), "-o", "-"]
    assert main(argv) == 0
    capsys.readouterr()

    def refuse(*args, **kwargs):
        raise AssertionError("analyze ran although the diff kept the old tree's reading")

    monkeypatch.setattr(pipeline_module, "analyze", refuse)
    argv = ["--root", str(old), "--cache-dir", str(cache), "--format", "json", "-o", "-"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["backends"]


def test_another_platform_keeps_every_default_but_the_capability(capsys):
    """On ROCm (given) the defaults are CUDA's less the capability and the platform,
    plus the arch; names
    sorting before "capability" (block-size, attn-type) stay (``d != "capability"``
    -> ``d > "capability"`` dropped them)."""
    argv = ["select", "--root", str(DEMO_TREE), "--format", "json", "--no-cache"]
    assert main(argv) == 0
    cuda = json.loads(capsys.readouterr().out)["configuration"]["defaults"]
    assert main([*argv, "--platform", "rocm"]) == 0
    rocm = json.loads(capsys.readouterr().out)["configuration"]["defaults"]
    assert {"block-size", "capability"} <= set(cuda)
    assert rocm == [*(d for d in cuda if d not in ("capability", "platform")), "arch"]
