"""The command line's cache: an unchanged tree is answered from the last run, and
any change to a file it read, or a file added where it looked, is noticed.

A mutant left alive on purpose: ``decisions.MAX_KEPT_DECISIONS`` 100_000 -> 100_001
is a capacity, a choice rather than a behaviour; the rule it feeds (past the limit,
the newest are kept) is pinned below with the limit set to 1 and 2.

Mutants argued equivalent (no input tells them from the product):
- decisions ``len(known) > MAX_KEPT_DECISIONS`` -> ``!=``: below the limit the cut
  ``[-limit:]`` keeps every decision, so cutting there changes nothing.
- checks.check_source_links ``line=1`` -> ``line=2`` or ``line=0``: the trial format
  of a link template; no ``str.format`` field, index, attribute or spec accepts one
  of these ints and refuses another (``c`` takes every int below 0x110000).
- select ``environment.platform == "rocm"`` -> ``<=`` (``cpu`` and ``cuda`` sort
  first): the capability derived from an arch then is computed off ROCm too, but
  ``echo`` reads it only under ``platform == "rocm"``, and the derivation is guarded
  (an unknown or a raise gives None), so output and exit code are the same.
- runcache ``O_CREAT | O_EXCL`` -> ``O_CREAT ^ O_EXCL``: two distinct bits, so ``|``
  and ``^`` give the same flags.
- runcache ``os.urandom(4)`` -> ``os.urandom(5)``: only the length of the random part
  of a private temporary name (created with ``O_EXCL``, renamed over the entry at once),
  which nothing reads back.
- runcache._text_file ``hexdigest()[:32]`` -> ``[:33]``: the name of a kept copy of
  a file, made and looked up by this one function only (a longer prefix of the same
  digest names the same entries apart just as well); nothing else reads the name.
- runcache.prune_texts ``and (self.directory / "texts").is_dir()`` dropped: ``_prune``
  globs the folder, and ``Path.glob`` of a missing folder or of a file yields nothing,
  so there is nothing to prune either way.
- decisions._key ``k != "selected_backend" or v`` -> ``k == ... or v``, and (sample
  60) -> ``k >= ... or v`` (falsy fields named before it left out, a falsy
  ``selected_backend`` kept): each field has one falsy value the input checks let
  through (None for an optional number or name, False for a flag; no empty dtype, no 0
  heads or block size), so no two valid configurations get the same key, and the key
  is only compared with keys the same code wrote (the code is in the entry's name).
- runcache ``MAX_TEXTS`` 2048 -> 2049: a capacity (copies of files kept), a choice
  rather than a behaviour; telling them apart takes a cache holding 2049 copies.
- select ``args.format == "json"`` -> ``<=``: argparse accepts only ``text`` and
  ``json`` (``choices``), and ``"text" <= "json"`` is false as ``==`` is.
- main ``args.profile == "vllm-page"`` -> ``>=`` (the template's markers): argparse
  accepts only ``runtime`` and ``vllm-page``, and ``"runtime" >= "vllm-page"`` is false.
- main.write_diff ``same = realpath(old) == realpath(new)`` -> ``>`` (and, sample 60,
  ``is``): ``same`` only
  picks the cache the old tree is read with when plugins are given; a diff compares
  CUDA page analyses, which the plugins (ascend, gaudi: their platforms' sections)
  leave unchanged, and with plugins nothing is cached: the diffs of the demo tree
  with itself, each plugin, with and without its --platform, came out identical.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
from pathlib import Path

import pytest
from loaded_modules import modules_loaded_by
from treebuilder import DEMO_TREE

from sphinxext_attn import cli
from sphinxext_attn.cli import runcache
from sphinxext_attn.cli import select as select_cli
from sphinxext_attn.cli.runcache import RunCache
from sphinxext_attn.selection.decision import Selector

pipeline_module = importlib.import_module("sphinxext_attn.analysis.pipeline")
units_module = importlib.import_module("sphinxext_attn.analysis.units")


def _tree(tmp_path: Path, source: Path = DEMO_TREE) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(source, tree)
    return tree


def _forbid(monkeypatch, target, name: str) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError(f"{name} ran although the cache holds the answer")

    monkeypatch.setattr(target, name, refuse)


def _page(tree: Path, cache: Path, *extra: str) -> str:
    out = tree.parent / "page.md"
    assert cli.main(["--root", str(tree), "--cache-dir", str(cache), "-o", str(out), *extra]) == 0
    return out.read_text(encoding="utf-8")


def _touch_content(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_unchanged_tree_is_answered_without_analysis(tmp_path, monkeypatch):
    tree, cache = _tree(tmp_path), tmp_path / "cache"
    first = _page(tree, cache)
    assert list(cache.glob("analysis-*.pickle"))
    assert oct(cache.stat().st_mode & 0o777) == "0o700"
    _forbid(monkeypatch, pipeline_module, "analyze")
    _forbid(monkeypatch, units_module, "runtime_analysis")
    assert _page(tree, cache) == first


def test_an_answer_from_the_cache_loads_no_analysis_module(tmp_path):
    """A cached run imports the records and the renderer only (start-up time)."""
    tree, cache = _tree(tmp_path), tmp_path / "cache"
    _page(tree, cache)
    args = ["--root", str(tree), "--cache-dir", str(cache), "-o", "-"]
    analysis = ("analysis", "source", "pyeval", "page", "runtime", "select")
    loaded = [
        m
        for m in modules_loaded_by(args, cwd=tmp_path)
        if len(m.split(".")) > 2
        and m.split(".")[1] in analysis
        and m != "sphinxext_attn.source.locate"
    ]
    assert loaded == []


def test_an_edited_file_is_analysed_again(tmp_path):
    tree, cache = _tree(tmp_path), tmp_path / "cache"
    first = _page(tree, cache)
    backend = next((tree / "vllm").rglob("flash_attn.py"))
    text = backend.read_text(encoding="utf-8")
    assert "torch.float16" in text
    backend.write_text(text.replace("torch.float16, ", "", 1), encoding="utf-8")
    second = _page(tree, cache)
    assert second != first
    assert second == _page(tree, cache, "--no-cache")


def test_a_file_added_where_the_analysis_looked_is_noticed(tmp_path, monkeypatch):
    tree, cache = _tree(tmp_path), tmp_path / "cache"
    _page(tree, cache)
    folder = next((tree / "vllm").rglob("flash_attn.py")).parent
    calls = []
    real = units_module.runtime_analysis
    monkeypatch.setattr(
        units_module, "runtime_analysis", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    (folder / "new_backend.py").write_text("X = 1\n", encoding="utf-8")
    _page(tree, cache)
    assert calls == [1]  # each answer is checked again (see test_incremental.py)


def test_options_and_profiles_are_kept_apart(tmp_path):
    tree, cache = _tree(tmp_path), tmp_path / "cache"
    runtime_json = _page(tree, cache, "--format", "json")
    page_json = _page(tree, cache, "--format", "json", "--profile", "vllm-page")
    assert runtime_json != page_json
    assert len(list(cache.glob("analysis-*.pickle"))) == 2
    assert _page(tree, cache, "--format", "json") == runtime_json
    assert _page(tree, cache, "--format", "json", "--profile", "vllm-page") == page_json


def test_no_cache_writes_nothing(tmp_path):
    tree, cache = _tree(tmp_path), tmp_path / "cache"
    _page(tree, cache, "--no-cache")
    assert not cache.exists()


def test_broken_or_foreign_entries_are_ignored(tmp_path):
    tree, cache = _tree(tmp_path), tmp_path / "cache"
    first = _page(tree, cache)
    for entry in cache.glob("*.pickle"):
        entry.write_bytes(b"not a pickle")
    assert _page(tree, cache) == first
    store = RunCache(cache)
    store.store("x", tree, {}, {"value": 1}, ["vllm"])
    assert store.load("x", tree, {}) == {"value": 1}
    assert store.load("x", tree, {"other": True}) is None
    if hasattr(os, "getuid"):
        real = os.getuid
        try:
            os.getuid = lambda: real() + 1  # type: ignore[assignment]
            assert store.load("x", tree, {}) is None
        finally:
            os.getuid = real  # type: ignore[assignment]


def test_empty_variable_turns_the_cache_off(monkeypatch, tmp_path):
    monkeypatch.setenv(runcache.ENV_DIR, "")
    assert runcache.default_dir() is None
    monkeypatch.setenv(runcache.ENV_DIR, str(tmp_path))
    assert runcache.default_dir() == tmp_path
    monkeypatch.delenv(runcache.ENV_DIR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert runcache.default_dir() == tmp_path / "xdg" / "sphinxext-attn"


CASES = [
    {"capability": "9.0", "config": {"dtype": "bf16", "head_size": 128}},
    {"capability": "8.0", "config": {"dtype": "fp16", "head_size": 64, "use_mla": True}},
]


def _select(tree: Path, cache: Path, tmp_path: Path, given: list | None = None) -> list:
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(CASES if given is None else given), encoding="utf-8")
    out = tmp_path / "results.json"
    args = ["--root", str(tree), "--cases", str(cases), "-o", str(out), "--cache-dir", str(cache)]
    assert select_cli.main(args) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def test_select_keeps_decisions_while_the_tree_is_unchanged(tmp_path, monkeypatch):
    tree, cache = _tree(tmp_path, DEMO_TREE), tmp_path / "cache"
    first = _select(tree, cache, tmp_path)
    assert first[0]["selected"]
    with monkeypatch.context() as patch:
        _forbid(patch, Selector, "decide")
        assert _select(tree, cache, tmp_path) == first
    cuda = tree / "vllm" / "platforms" / "cuda.py"
    _touch_content(cuda, "\n# edited\n")
    calls = []
    real = Selector.decide
    monkeypatch.setattr(Selector, "decide", lambda self, c: calls.append(c) or real(self, c))
    assert _select(tree, cache, tmp_path) == first
    assert len(calls) == len(CASES)


def test_select_text_output_from_a_kept_decision(tmp_path, capsys):
    tree, cache = _tree(tmp_path, DEMO_TREE), tmp_path / "cache"
    args = ["--root", str(tree), "--cache-dir", str(cache)]
    assert select_cli.main(args) == 0
    first = capsys.readouterr().out
    assert select_cli.main(args) == 0
    assert capsys.readouterr().out == first
    assert "selected:" in first


@pytest.mark.parametrize("kind", ["analysis", "decisions"])
def test_unwritable_cache_costs_only_time(tmp_path, kind):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    store = RunCache(blocker / "cache")
    store.store(kind, tmp_path, {}, {"a": 1}, [])
    assert store.load(kind, tmp_path, {}) is None


def test_least_recently_used_entries_are_pruned(tmp_path, monkeypatch):
    monkeypatch.setattr(runcache, "MAX_ENTRIES", 3)
    store = RunCache(tmp_path / "cache")
    for i in range(3):
        store.store("x", tmp_path, {"i": i}, i, [])
        entry = store._file("x", tmp_path, {"i": i})
        assert entry is not None
        os.utime(entry, ns=(i * 10**9, i * 10**9))  # written in order, a second apart
    assert store.load("x", tmp_path, {"i": 0}) == 0  # used again: now the newest
    store.store("x", tmp_path, {"i": 3}, 3, [])
    assert len(list((tmp_path / "cache").glob("*.pickle"))) == 3
    assert store.load("x", tmp_path, {"i": 1}) is None  # the least recently used went
    assert [store.load("x", tmp_path, {"i": i}) for i in (0, 2, 3)] == [0, 2, 3]


def test_kept_decisions_grow_by_new_cases_not_by_repeated_paths(tmp_path):
    tree, cache = _tree(tmp_path, DEMO_TREE), tmp_path / "cache"
    store = RunCache(cache)
    _select(tree, cache, tmp_path)
    first = store.load_entry("decisions", tree, {})
    assert first is not None and len(first[0]) == len(CASES)
    CASES.append({"capability": "10.0", "config": {"dtype": "bf16", "head_size": 64}})
    try:
        _select(tree, cache, tmp_path)
    finally:
        CASES.pop()
    second = store.load_entry("decisions", tree, {})
    assert second is not None and len(second[0]) == len(CASES) + 1
    assert len(second[1]) == len(set(second[1])) >= len(first[1])


def test_an_entry_of_a_few_megabytes_is_kept_and_one_past_the_limit_is_not(tmp_path, monkeypatch):
    tree = _tree(tmp_path)
    cache = RunCache(tmp_path / "cache")
    big = b"x" * (3 * 1024 * 1024)  # a decision map of some thousand cases
    cache.store("decisions", tree, {}, big, ["vllm"])
    assert cache.load("decisions", tree, {}) == big
    monkeypatch.setattr(runcache, "MAX_ENTRY_BYTES", len(big))  # the head makes it larger
    cache.store("decisions", tree, {"other": 1}, big, ["vllm"])
    assert cache.load("decisions", tree, {"other": 1}) is None


def test_an_entry_of_a_user_whose_id_is_large_is_theirs(tmp_path, monkeypatch):
    """Owner ids compare by value: a uid above the few small ints CPython shares
    (root's 0 is one) must still match its own entries."""
    tree = _tree(tmp_path)
    cache = RunCache(tmp_path / "cache")
    cache.store("x", tree, {}, "kept", [])
    entry = cache._file("x", tree, {})
    assert entry is not None
    if os.getuid() == 0:  # as root (CI): give the entry to a user with a large id
        os.chown(entry, 100_000, -1)
        monkeypatch.setattr(os, "getuid", lambda: int("100000"))
    assert cache.load("x", tree, {}) == "kept"
    monkeypatch.setattr(os, "getuid", lambda: int("100001"))
    assert cache.load("x", tree, {}) is None  # someone else's


def test_a_kept_copy_of_a_user_whose_id_is_large_is_theirs(tmp_path, monkeypatch):
    """The same for the kept copies of files (``!=`` -> ``is not`` refused a large
    id's own copies)."""
    cache = RunCache(tmp_path / "cache")
    stamp = (1, 2, 3)
    cache.keep_text(tmp_path, "vllm/x.py", stamp, b"kept")
    copy = cache._text_file(tmp_path, "vllm/x.py", stamp)
    assert copy is not None and copy.exists()
    if os.getuid() == 0:  # as root (CI): give the copy to a user with a large id
        os.chown(copy, 100_000, -1)
        monkeypatch.setattr(os, "getuid", lambda: int("100000"))
    assert cache.kept_text(tmp_path, "vllm/x.py", stamp) == b"kept"
    monkeypatch.setattr(os, "getuid", lambda: int("100001"))
    assert cache.kept_text(tmp_path, "vllm/x.py", stamp) is None  # someone else's


def test_kept_decisions_are_cut_to_the_newest_past_the_limit(tmp_path, monkeypatch):
    from sphinxext_attn.cli import decisions

    monkeypatch.setattr(decisions, "MAX_KEPT_DECISIONS", 1)
    tree, cache = _tree(tmp_path, DEMO_TREE), tmp_path / "cache"
    _select(tree, cache, tmp_path)
    kept = RunCache(cache).load_entry("decisions", tree, {})
    assert kept is not None and len(kept[0]) == 1


def test_past_the_limit_exactly_the_newest_decisions_are_kept(tmp_path, monkeypatch):
    """Five decisions, a limit of two: the last two asked are kept (``[-limit:]`` ->
    ``[+limit:]`` kept all but the first two)."""
    from sphinxext_attn.cli import decisions

    monkeypatch.setattr(decisions, "MAX_KEPT_DECISIONS", 2)
    tree, cache = _tree(tmp_path, DEMO_TREE), tmp_path / "cache"
    sizes = [64, 80, 96, 112, 128]
    given = [{"capability": "9.0", "config": {"dtype": "bf16", "head_size": h}} for h in sizes]
    _select(tree, cache, tmp_path, given)
    kept = RunCache(cache).load_entry("decisions", tree, {})
    assert kept is not None
    assert [json.loads(key)["head_size"] for key in kept[0]] == [112, 128]


def test_an_entry_owned_by_a_user_whose_id_is_above_ours_is_not_trusted(tmp_path, monkeypatch):
    """Someone else's entry is refused whichever side of our id theirs lies."""
    tree = _tree(tmp_path)
    cache = RunCache(tmp_path / "cache")
    cache.store("x", tree, {}, "kept", [])
    if not hasattr(os, "getuid"):
        return  # (no owners to compare)
    cache.keep_text(tree, "vllm/x.py", (1, 2, 3), b"text")
    assert cache.kept_text(tree, "vllm/x.py", (1, 2, 3)) == b"text"
    real = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: real - 1)  # the entries' owner is above us
    assert cache.load("x", tree, {}) is None
    assert cache.kept_text(tree, "vllm/x.py", (1, 2, 3)) is None


def test_an_entry_is_written_private_to_its_owner(tmp_path):
    """Written through a file only its owner may read (0o600), then renamed."""
    tree = _tree(tmp_path)
    cache = RunCache(tmp_path / "cache")
    cache.store("x", tree, {}, "kept", [])
    entry = cache._file("x", tree, {})
    assert entry is not None and oct(Path(entry).stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("delta", [-1, 1])
def test_an_entry_whose_header_names_another_format_is_not_trusted(tmp_path, delta):
    """The file name already holds the format; a file put at that name by another
    version (an older format read as ours, ``!=`` -> ``>``) is recomputed all the same."""
    import pickle

    tree, store = _tree(tmp_path), RunCache(tmp_path / "cache")
    store.store("x", tree, {}, {"value": 1}, ["vllm"])
    (entry,) = (tmp_path / "cache").glob("x-*.pickle")
    with entry.open("rb") as fh:
        head, value = pickle.load(fh), pickle.load(fh)
    head["format"] = runcache.FORMAT + delta
    entry.write_bytes(pickle.dumps(head) + pickle.dumps(value))
    assert store.load("x", tree, {}) is None
    head["format"] = runcache.FORMAT
    entry.write_bytes(pickle.dumps(head) + pickle.dumps(value))
    assert store.load("x", tree, {}) == {"value": 1}  # the same bytes, our format: kept


def test_a_kept_decision_for_a_requested_backend_is_kept_apart():
    """The backend asked for is part of a kept decision's key: without it, an automatic
    pick kept earlier would answer a forced one (``or v`` -> ``and v`` dropped it)."""
    from sphinxext_attn.cli.decisions import _key
    from sphinxext_attn.model.selection import Config

    plain = Config()
    keys = {_key(plain), *(_key(Config(selected_backend=n)) for n in ("FLASH_ATTN", "FLEX"))}
    assert len(keys) == 3
