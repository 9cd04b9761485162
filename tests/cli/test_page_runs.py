"""The page command's own paths, run in this process: ``--check`` writing a page
that differs and passing on one that does not, a template that cannot be read,
markers that cannot be filled, which changed files concern the page, a page for
another machine kept apart in the cache, and a diff's notes about the old tree."""

from __future__ import annotations

from pathlib import Path

import pytest
import vllm_trees
from treebuilder import DEMO_TREE

from sphinxext_attn.cli.main import is_relevant, main


def test_check_regenerates_a_page_that_differs_then_passes(tmp_path, capsys):
    page = tmp_path / "page.md"
    argv = ["--root", str(DEMO_TREE), "-o", str(page), "--check", "--no-cache"]
    assert main(argv) == 1  # no page yet: written, and the check fails
    assert capsys.readouterr().out == f"Regenerated: {page}\n"
    written = page.read_text(encoding="utf-8")
    assert main(argv) == 0
    assert capsys.readouterr().out == f"Up to date: {page}\n"
    assert page.read_text(encoding="utf-8") == written
    page.write_text(written.rstrip("\n").rsplit("\n", 1)[0] + "\n", encoding="utf-8")
    assert main(argv) == 1  # the last row gone: put back
    assert page.read_text(encoding="utf-8") == written


def test_a_page_template_that_cannot_be_read_is_exit_2(tmp_path, capsys):
    """The tree's own page (``--fill-markers``) missing, or a page to ``--check``
    that is not UTF-8: said, and nothing written."""
    out = tmp_path / "out.md"
    argv = ["--root", str(DEMO_TREE), "--profile", "vllm-page", "--no-cache", "-o", str(out)]
    assert main([*argv, "--fill-markers"]) == 2
    tree_page = DEMO_TREE / "docs" / "design" / "attention_backends.md"
    assert capsys.readouterr().err == f"sphinxext-attn: cannot read template {tree_page}\n"
    assert not out.exists()
    out.write_bytes(b"\xff\xfe not text")
    assert main([*argv, "--check"]) == 2
    assert capsys.readouterr().err == f"sphinxext-attn: cannot read template {out}\n"
    assert out.read_bytes() == b"\xff\xfe not text"


def test_a_marker_the_page_cannot_fill_is_exit_2(tmp_path, capsys):
    template = tmp_path / "template.md"
    template.write_text('# Backends\n\n--8<-- "gen:no-such-block"\n', encoding="utf-8")
    argv = ["--root", str(DEMO_TREE), "--profile", "vllm-page", "--template", str(template)]
    assert main([*argv, "--no-cache", "-o", "-"]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        f'sphinxext-attn: {template}: cannot fill --8<-- "gen:no-such-block" (unknown block)\n'
    )
    assert captured.out == ""


def test_an_absolute_path_is_relevant_only_inside_the_root(tmp_path):
    inside = DEMO_TREE / "vllm" / "platforms" / "cuda.py"
    assert is_relevant("vllm/platforms/cuda.py", DEMO_TREE)
    assert is_relevant(str(inside), DEMO_TREE)
    assert not is_relevant(str(tmp_path / "vllm" / "platforms" / "cuda.py"), DEMO_TREE)
    assert not is_relevant(str(DEMO_TREE / "README.md"), DEMO_TREE)
    assert isinstance(DEMO_TREE, Path)


@pytest.mark.realtree
def test_check_of_a_marker_page_names_each_marker_problem(tmp_path, capsys):
    """0.33.0's generator fills its own blocks: a page lacking them, with a marker
    nothing fills, fails the check with a line each and is left as it is."""
    page = tmp_path / "page.md"
    text = '# Attention backends\n\n--8<-- "gen:no-such-block"\n'
    page.write_text(text, encoding="utf-8")
    root = str(vllm_trees.tree("0.33.0"))
    assert main(["--root", root, "-o", str(page), "--check", "--no-cache"]) == 1
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert f'{page}: missing marker --8<-- "gen:table-standard"' in lines
    assert lines[-1] == (
        f'{page}: unsubstituted marker --8<-- "gen:no-such-block" (its generator fills no '
        "such block)"
    )
    assert captured.out == "" and page.read_text(encoding="utf-8") == text


def test_a_page_for_another_machine_is_kept_apart(tmp_path, capsys):
    """The same tree asked with a fact set is another analysis, one per setting:
    kept beside the reference machine's, never answered from it or each other."""
    cache = tmp_path / "cache"
    argv = ["--root", str(DEMO_TREE), "--cache-dir", str(cache), "-o", "-"]
    assert main(argv) == 0
    assert main([*argv, "--assume", "installed.aiter=true"]) == 0
    assert main([*argv, "--assume", "installed.aiter=false"]) == 0
    assert main(argv) == 0  # answered from the first entry: no fourth one
    capsys.readouterr()
    assert len(list(cache.glob("analysis-*.pickle"))) == 3


def test_a_diff_says_the_old_trees_notes_as_the_new_ones_are_said(tmp_path, capsys):
    """A backend module gone from the old tree: its note is printed once, labelled
    as the new tree's would be; the diff shows the backend as added."""
    import json
    import shutil

    old = tmp_path / "old"
    shutil.copytree(DEMO_TREE, old)
    (old / "vllm/v1/attention/backends/rocm_attn.py").unlink()
    out = tmp_path / "diff.json"
    argv = ["--profile", "vllm-page", "--root", str(DEMO_TREE), "--diff", str(old)]
    assert main([*argv, "--no-cache", "--format", "json", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert err == (
        "note: vllm/v1/attention/backends/registry.py:14: ROCM_ATTN: module file "
        "vllm/v1/attention/backends/rocm_attn.py not found\n"
    )
    changes = json.loads(out.read_text(encoding="utf-8"))["changes"]
    assert any("ROCM_ATTN" in json.dumps(c) for c in changes)
