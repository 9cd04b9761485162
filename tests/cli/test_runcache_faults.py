"""The run cache where it cannot do its work (cli/runcache.py): no folder, an entry
or copy that cannot be written or read. Each costs only time: the run goes on,
nothing half-written is left, and nothing is answered from it."""

from __future__ import annotations

import os

from sphinxext_attn.cli import runcache
from sphinxext_attn.cli.runcache import RunCache

STAMP = (1, 2, 3)


def test_without_a_folder_nothing_is_kept_or_found(tmp_path):
    cache = RunCache(None)
    cache.store("x", tmp_path, {}, 1, [])
    assert cache.load("x", tmp_path, {}) is None
    cache.keep_text(tmp_path, "vllm/x.py", STAMP, b"text")
    assert cache.kept_text(tmp_path, "vllm/x.py", STAMP) is None
    cache.prune_texts()
    assert list(tmp_path.iterdir()) == []


def test_an_entry_that_cannot_be_replaced_leaves_no_temporary_file(tmp_path):
    """The entry's name taken by a folder: the write fails at the rename, its
    temporary file is removed and the run goes on."""
    folder = tmp_path / "cache"
    cache = RunCache(folder)
    cache.store("x", tmp_path, {}, 1, [])
    entry = cache._file("x", tmp_path, {})
    assert entry is not None and cache.load("x", tmp_path, {}) == 1
    entry.unlink()
    entry.mkdir()
    (entry / "inside").write_text("kept", encoding="utf-8")
    cache.store("x", tmp_path, {}, 2, [])
    assert sorted(p.name for p in folder.iterdir()) == [entry.name]
    assert (entry / "inside").read_text(encoding="utf-8") == "kept"
    assert cache.load("x", tmp_path, {}) is None


def test_a_copy_that_cannot_be_kept_or_read_is_none(tmp_path):
    """``texts`` taken by a file: no copy is kept; a copy never kept reads as None."""
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / "texts").write_text("not a folder", encoding="utf-8")
    cache = RunCache(folder)
    cache.keep_text(tmp_path, "vllm/x.py", STAMP, b"text")
    assert cache.kept_text(tmp_path, "vllm/x.py", STAMP) is None
    cache.prune_texts()  # no folder of copies: nothing to prune
    assert (folder / "texts").read_text(encoding="utf-8") == "not a folder"
    fresh = RunCache(tmp_path / "fresh")
    assert fresh.kept_text(tmp_path, "vllm/x.py", STAMP) is None


def test_copies_past_the_limit_are_pruned_oldest_first(tmp_path, monkeypatch):
    monkeypatch.setattr(runcache, "MAX_TEXTS", 2)
    cache = RunCache(tmp_path / "cache")
    for i in range(3):
        cache.keep_text(tmp_path, f"vllm/{i}.py", STAMP, b"%d" % i)
        path = cache._text_file(tmp_path, f"vllm/{i}.py", STAMP)
        assert path is not None
        os.utime(path, ns=(i * 10**9, i * 10**9))
    cache.prune_texts()
    kept = [cache.kept_text(tmp_path, f"vllm/{i}.py", STAMP) for i in range(3)]
    assert kept == [None, b"1", b"2"]
