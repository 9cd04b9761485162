"""Edges of the command line a sampled mutation run (seed 59) found unpinned: the
files a forked child's answers read count for the kept decisions, and a markdown
page with source links links each cell to its deciding line.

Mutants argued equivalent (no input tells them from the product; more are listed in
test_runcache.py):
- runcache ``MAX_ENTRY_BYTES`` 64 MiB -> 63 MiB: a capacity (the largest entry
  kept), a choice rather than a behaviour; telling them apart takes an entry
  between the two sizes, over 63 MiB of pickled decisions.
- main ``args.format == "json"`` -> ``<=`` where the deciding lines are asked for
  (sample 60): the page's ``--format`` choices are ``markdown`` and ``json``, and
  ``"markdown" <= "json"`` is false, as ``==`` is.
- decisions.decide_all ``zip(keys, pairs, strict=True)`` -> ``strict=False``: ``keys``
  is made from ``pairs`` one for one on the line before, so the lengths match; and
  ``zip(theirs, decisions, strict=True)`` -> ``strict=False``: the child's
  ``decisions`` are made from ``theirs`` one for one (``_answer``).
- runcache ``O_WRONLY | O_CREAT | O_EXCL`` -> ``O_WRONLY + O_CREAT | O_EXCL``: three
  distinct bits, so ``+`` and ``|`` give the same flags (as ``^`` in test_runcache.py).
- main.write_diff ``same or not cache.plugins`` -> ``same or cache.plugins``: the old
  tree is then read with the run's plugins where it was read without them, and
  without plugins through a new cache of the same folder where it was read through
  the run's: a diff compares CUDA page analyses, which plugins leave unchanged, and
  the two caches are one folder (as for ``same`` in test_runcache.py).
- decisions ``MAX_KEPT_DECISIONS`` 100_000 -> 99_999 (sample 60; 100_001 is argued in
  test_runcache.py): a capacity, pinned there with the limit set to 1 and 2.
- checks.check_output ``parent != parent.parent`` -> ``parent > parent.parent``
  (sample 61): a path's parent has the path's parts less the last, and paths compare
  by their parts as lists, so a path is greater than its parent exactly when it is
  not its own parent (the root, or ``.``), which is when ``!=`` holds.
- runcache ``MAX_ENTRY_BYTES`` ``64 * 1024 * 1024`` -> ``64 << 1024 * 1024`` (sample
  61): a capacity, as the 63 MiB mutant above (here past any size: telling them
  apart takes an entry over 64 MiB).
- main ``args.format == "markdown"`` -> ``>=`` where a page's markers are checked
  (sample 61): the page's ``--format`` choices are ``markdown`` and ``json``, and
  ``"json" >= "markdown"`` is false, as ``==`` is.
"""

from __future__ import annotations

import re
import shutil

import pytest
import vllm_trees
from treebuilder import DEMO_TREE

from sphinxext_attn.cli.decisions import Answers, _key
from sphinxext_attn.cli.main import main
from sphinxext_attn.cli.runcache import RunCache
from sphinxext_attn.model.selection import Config


def test_a_child_reports_every_file_its_answers_read(tmp_path):
    """A forked child answers part of ``--cases``; the files its answers read are
    sent back with them, so an edit to one is noticed by the next run (``tree is
    not None`` -> ``is None`` sent none)."""
    answers = Answers(DEMO_TREE, RunCache(tmp_path / "cache"))
    config = Config(head_size=128)
    key = _key(config, answers.environment)
    decisions, paths = answers._answer([key], {key: (config, answers.environment)})
    assert decisions == [answers.known[key]]
    assert answers.tree is not None
    assert paths == [*answers.tree.files, *answers.tree.directories]
    assert "vllm/platforms/cuda.py" in paths


def test_a_markdown_page_with_source_links_links_deciding_lines(tmp_path):
    """``--source-links`` alone (no ``--diff``, markdown) asks for each cell's
    deciding line (``or`` -> ``and`` asked only with both)."""
    page = tmp_path / "page.md"
    argv = ["--root", str(DEMO_TREE), "--no-cache", "-o", str(page)]
    assert main([*argv, "--source-links", "https://x/{path}#L{line}"]) == 0
    text = page.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| [`CPU_ATTN`]"))
    cells = row.split(" | ")
    assert cells[5] == "[64, 80, 128](https://x/vllm/v1/attention/backends/cpu_attn.py#L28)"
    links = re.findall(r"\]\(https://x/([^)#]+)#L(\d+)\)", row)
    assert len(links) == 9  # the name and every feature cell but the empty Version


def test_a_kept_copy_that_cannot_be_decoded_is_read_again(tmp_path):
    """The kept copies of files are decoded on an edit run; one that no longer
    decodes (changed in the cache folder to declare ``coding: hex``, no text encoding: a
    LookupError) counts as not kept, and the page is the same (a LookupError let
    through escaped as a traceback)."""
    tree = tmp_path / "tree"
    shutil.copytree(DEMO_TREE, tree)
    out, cache = tmp_path / "page.md", tmp_path / "cache"
    argv = ["--root", str(tree), "--cache-dir", str(cache), "-o", str(out)]
    assert main(argv) == 0
    first = out.read_text(encoding="utf-8")
    copies = [p for p in (cache / "texts").rglob("*") if p.is_file()]
    assert copies
    for copy in copies:
        copy.write_bytes(b"# -*- coding: hex -*-\n" + copy.read_bytes())
    backend = tree / "vllm/v1/attention/backends/flash_attn.py"
    backend.write_text(backend.read_text(encoding="utf-8") + "\n# edited\n", "utf-8")
    assert main(argv) == 0
    assert out.read_text(encoding="utf-8") == first


def test_a_folder_link_in_the_package_is_not_followed_for_its_stamp(tmp_path):
    """The code stamp lists the package's ``.py`` files without following a folder
    link: one back up (a developer's checkout) would loop (sample 61:
    ``follow_symlinks=False`` -> ``True`` recursed until the system refused)."""
    from sphinxext_attn.cli.runcache import _sources

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "pkg" / "loop").symlink_to(tmp_path / "pkg", target_is_directory=True)
    assert [rel for rel, _ in _sources(str(tmp_path), "")] == ["pkg/mod.py"]


def test_kept_results_are_the_users_alone(tmp_path):
    """The kept results hold what a tree's code answers: files only the user may read
    or write, in folders only the user may enter (sample 61: the file mode ``0o600``
    -> ``385``, 0o601, let others execute it)."""
    import stat

    cache = tmp_path / "cache"
    args = ["--root", str(DEMO_TREE), "--cache-dir", str(cache), "-o", str(tmp_path / "p.md")]
    assert main(args) == 0
    files = [p for p in cache.rglob("*") if p.is_file()]
    assert files
    assert {stat.S_IMODE(p.stat().st_mode) for p in files} == {0o600}
    folders = [p for p in cache.rglob("*") if p.is_dir()]
    assert {stat.S_IMODE(p.stat().st_mode) for p in folders} == {0o700}


@pytest.mark.realtree
def test_the_kernel_call_passing_a_flashattention_version_is_named(capsys):
    """0.34.0's FLASH_ATTN_MLA decode passes ``fa_version=3``: ``select`` names that
    call (sample 61: ``if selected is None`` -> ``is not None`` named none)."""
    tree = vllm_trees.tree("0.34.0")
    args = ["select", "--root", str(tree), "--capability", "9.0", "--mla", "--head-size"]
    assert main([*args, "576", "--backend", "FLASH_ATTN_MLA", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert (
        "FlashAttention: FA3 (FLASH_ATTN_MLA's decode kernel call passes fa_version=3, "
        "vllm/v1/attention/backends/mla/flashattn_mla.py:"
    ) in out
