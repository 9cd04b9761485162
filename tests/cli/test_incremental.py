"""The runtime profile kept unit by unit: after an edit, exactly the answers that
read a changed view of the edited file (its text, a statement, its outline:
``source/views.py``) are asked again, and the result is a cold run's."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import vllm_trees
from loaded_modules import modules_loaded_by
from treebuilder import DEMO_TREE

from sphinxext_attn import cli
from sphinxext_attn.analysis.units import Done, runtime_analysis
from sphinxext_attn.cli import runcache
from sphinxext_attn.cli.runcache import RunCache, UnitEntries
from sphinxext_attn.model.environment import REFERENCE, environment_from
from sphinxext_attn.model.key import AnalysisKey
from sphinxext_attn.render.jsonout import render_json
from sphinxext_attn.source.views import CODE, RAW

OPTIONS = {"profile": "runtime", "provenance": True, "extras": True}


def _copy(tmp_path: Path, source: Path = DEMO_TREE) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(source, tree, symlinks=True)
    return tree


def _append(path: Path, text: str) -> None:
    """Append to a file and move its mtime on (a coarse clock cannot hide the edit)."""
    with path.open("a", encoding="utf-8") as fh:
        fh.write(text)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def _run(tree: Path, cache: Path, options=OPTIONS, environment=REFERENCE):
    """One cached run: its JSON, the units it computed, and the units kept after it."""
    store = UnitEntries(RunCache(cache), tree, options)
    analysis, runner = runtime_analysis(
        AnalysisKey(str(tree), environment=environment), store=store
    )
    store.save(runner.page.read_bytes())
    return render_json(analysis), runner.computed, store


def _cold(tree: Path, environment=REFERENCE) -> str:
    analysis, _ = runtime_analysis(AnalysisKey(str(tree), environment=environment))
    return render_json(analysis)


def _unit(key: str) -> str:
    """A unit's name: a syntax check's key also holds where its class was cut out."""
    return key.rsplit(", ", 2)[0] if key.startswith("('syntax'") else key


def _readers(store: UnitEntries, rel: str) -> set[str]:
    """The kept units whose result rests on ``rel``."""
    return {_unit(key) for key, (stamps, _, _) in store.units.items() if rel in stamps}


def _text_readers(store: UnitEntries, rel: str) -> set[str]:
    """The kept units whose result rests on the whole text of ``rel`` (a comment
    appended to it changes no statement: only those are asked again)."""
    return {_unit(key) for key, (_, views, _) in store.units.items() if RAW in views.get(rel, ())}


def test_units_record_the_files_they_read(tmp_path):
    tree, cache = _copy(tmp_path), tmp_path / "cache"
    _, computed, store = _run(tree, cache)
    assert set(computed) == set(store.units)
    backends = [k for k in store.units if k.startswith("('backend'")]
    assert len(backends) >= 5
    for key in backends:
        stamps, views, done = store.units[key]
        assert isinstance(done, Done)
        assert views == done.views
        assert any(rel.startswith("vllm/") for rel in stamps)
    # the class file of each backend is among what its answers read
    flash = next(k for k in backends if "'FLASH_ATTN'" in k)
    assert "vllm/v1/attention/backends/flash_attn.py" in store.units[flash][0]


@pytest.mark.parametrize(
    "rel",
    [
        "vllm/v1/attention/backends/triton_attn.py",
        "vllm/v1/attention/backends/flash_attn.py",
        "vllm/platforms/cuda.py",
    ],
)
def test_an_edit_asks_again_exactly_the_answers_that_read_what_changed(tmp_path, rel):
    tree, cache = _copy(tmp_path), tmp_path / "cache"
    _run(tree, cache)
    _, nothing, _ = _run(tree, cache)
    assert nothing == []  # unchanged: every unit from the cache
    store = UnitEntries(RunCache(cache), tree, OPTIONS)
    readers, text_readers = _readers(store, rel), _text_readers(store, rel)
    assert readers  # some answer read it
    _append(tree / rel, "\n# an edit\n")
    got, computed, _ = _run(tree, cache)
    # those that read its text (the demo tree's comments), or a class parsed alone
    # where it ends (the rest of the file is checked around it, as cut)
    assert text_readers <= {_unit(k) for k in computed} <= readers
    assert got == _cold(tree)
    # a statement added at the top moves every line: its readers are all asked again
    path = tree / rel
    path.write_text("X_EDITED = 1\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    _append(path, "")
    got, computed, _ = _run(tree, cache)
    assert {_unit(k) for k in computed} == readers
    assert got == _cold(tree)


def test_an_edit_that_changes_an_answer_gives_the_cold_result(tmp_path):
    tree, cache = _copy(tmp_path), tmp_path / "cache"
    first, _, _ = _run(tree, cache)
    backend = tree / "vllm/v1/attention/backends/flash_attn.py"
    text = backend.read_text(encoding="utf-8")
    assert "torch.float16, " in text
    backend.write_text(text.replace("torch.float16, ", "", 1), encoding="utf-8")
    st = backend.stat()
    os.utime(backend, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    second, computed, _ = _run(tree, cache)
    assert second != first
    assert second == _cold(tree)
    assert any("'FLASH_ATTN'" in key for key in computed)


def test_a_missing_module_that_appears_is_noticed(tmp_path):
    """A path an answer looked for and did not find is part of what it read."""
    tree, cache = _copy(tmp_path), tmp_path / "cache"
    _run(tree, cache)
    store = UnitEntries(RunCache(cache), tree, OPTIONS)
    # a module only backends' answers looked for (the head's, e.g. vLLM's own page
    # generator, change what every backend is asked: all of them would run again)
    absent = {
        rel
        for key, (stamps, _, _) in store.units.items()
        for rel, stamp in stamps.items()
        if stamp is None and rel.endswith(".py") and key.startswith("('backend'")
    }
    absent -= {
        rel for key, (stamps, _, _) in store.units.items() for rel in stamps if key == "head"
    }
    assert absent
    rel = sorted(absent)[0]
    (tree / rel).parent.mkdir(parents=True, exist_ok=True)
    (tree / rel).write_text("X = 1\n", encoding="utf-8")
    got, computed, _ = _run(tree, cache)
    assert {_unit(k) for k in computed} == _readers(store, rel)
    assert got == _cold(tree)


def test_another_environment_does_not_reuse_the_units(tmp_path):
    tree, cache = _copy(tmp_path), tmp_path / "cache"
    _, first, _ = _run(tree, cache)
    environment = environment_from(env={"VLLM_HAS_FLASHINFER_CUBIN": "1"})
    options = {**OPTIONS, "environment": environment.key()}
    got, computed, _ = _run(tree, cache, options, environment)
    assert sorted(computed) == sorted(first)  # all asked again
    assert got == _cold(tree, environment)


def test_another_version_of_the_package_does_not_reuse_the_units(tmp_path, monkeypatch):
    tree, cache = _copy(tmp_path), tmp_path / "cache"
    _, first, _ = _run(tree, cache)
    monkeypatch.setattr(runcache, "_code_stamp", lambda: "another checkout")
    _, computed, _ = _run(tree, cache)
    assert sorted(computed) == sorted(first)


def test_the_command_line_after_an_edit_equals_a_cold_run(tmp_path):
    tree, cache = _copy(tmp_path), tmp_path / "cache"
    out = tmp_path / "page.json"

    def page(*extra: str) -> str:
        args = ["--root", str(tree), "--format", "json", "-o", str(out), *extra]
        assert cli.main([*args, "--cache-dir", str(cache)]) == 0
        return out.read_text(encoding="utf-8")

    page()
    _append(tree / "vllm/v1/attention/backends/triton_attn.py", "\n# an edit\n")
    assert page() == page("--no-cache")


@pytest.mark.realtree
def test_one_backend_file_of_a_release(tmp_path):
    """vLLM 0.33.0: an appended comment asks nothing again (its syntax check found
    nothing, and rests only on the text before the comments that end it)."""
    tree, cache = _copy(tmp_path, vllm_trees.tree("0.33.0")), tmp_path / "cache"
    cold, _, _ = _run(tree, cache)
    rel = "vllm/v1/attention/backends/flex_attention.py"
    store = UnitEntries(RunCache(cache), tree, OPTIONS)
    assert _text_readers(store, rel) == set()
    checks = {k for k, (_, views, _) in store.units.items() if CODE in views.get(rel, ())}
    assert {_unit(k) for k in checks} == {_unit(repr(("syntax", rel, 0, 0)))}
    _append(tree / rel, "\n# an edit\n")
    got, computed, _ = _run(tree, cache)
    assert computed == []
    assert got == cold


def _syntax_said(json_text: str) -> list[str]:
    """Where each syntax warning of a JSON output points (``path:line``)."""
    said = json.loads(json_text)["diagnostics"]
    return [d["location"] for d in said if d["message"].startswith("syntax error")]


@pytest.mark.parametrize(
    ("tail", "asked_again"),
    [
        ("\n# a comment\n\n   # another\n", False),
        ("\nx = = 1\n", True),  # a broken line after the checked text
        ("\n# a comment \\\nx = = 1\n", True),  # a backslash in the comment
        ("\n# it's\n", True),  # a quote in the comment
        ("\n# a\rx = = 1\n", True),  # CPython breaks the line at a carriage return
    ],
)
def test_a_clean_syntax_check_is_kept_only_under_appended_comments(tmp_path, tail, asked_again):
    """The check of the rest of a file (its class parsed alone) is asked again unless
    the edit only appended blank and plain comment lines; a broken line appended
    is warned about with its file and line, as in a cold run."""
    tree, cache = _copy(tmp_path), tmp_path / "cache"
    rel = "vllm/v1/attention/backends/flash_attn.py"
    # a statement after the backend's class (a comment appended after the class
    # would join its piece, which is cut out of the check)
    _append(tree / rel, "\n\ndef after():\n    return 1\n")
    _run(tree, cache)
    lines = (tree / rel).read_text(encoding="utf-8").count("\n")
    with (tree / rel).open("a", encoding="utf-8", newline="") as fh:
        fh.write(tail)
    st = (tree / rel).stat()
    os.utime(tree / rel, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    got, computed, _ = _run(tree, cache)
    assert any(k.startswith("('syntax'") for k in computed) == asked_again
    assert got == _cold(tree)
    said = _syntax_said(got)
    if "= =" in tail:
        before = tail[: tail.index("= =")]  # CPython ends a line at a carriage return too
        assert said == [f"{rel}:{lines + before.count(chr(10)) + before.count(chr(13)) + 1}"]
    else:
        assert said == []


def test_a_broken_file_is_checked_again_after_any_edit(tmp_path):
    """A check that found a problem rests on the whole text: a comment appended to
    the broken file asks it again (the line it names could move)."""
    tree, cache = _copy(tmp_path), tmp_path / "cache"
    rel = "vllm/v1/attention/backends/flash_attn.py"
    _append(tree / rel, "\nx = = 1\n")
    first, _, _ = _run(tree, cache)
    assert len(_syntax_said(first)) == 1
    _append(tree / rel, "# a comment\n")
    got, computed, _ = _run(tree, cache)
    assert any(k.startswith("('syntax'") for k in computed)
    assert got == _cold(tree) == first


def test_answers_asked_again_on_one_interpreter_keep_the_files_before_them(tmp_path):
    """A few answers asked again share one interpreter: what it remembers was read by
    the units before, so each is kept as reading their files too (never stale)."""
    tree, cache = _copy(tmp_path), tmp_path / "cache"
    _run(tree, cache)
    rel = "vllm/v1/attention/backends/flash_attn.py"
    path = tree / rel  # a line added at the top: every statement moves
    path.write_text("\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    _append(path, "")
    _, computed, store = _run(tree, cache)
    backends = [k for k in computed if k.startswith("('backend'")]
    assert len(backends) >= 2
    for before, after in zip(backends, backends[1:], strict=False):
        assert set(store.units[before][0]) <= set(store.units[after][0])
    assert all(rel in store.units[k][0] for k in backends)


@pytest.mark.realtree
def test_a_run_that_asks_nothing_again_loads_no_evaluator(tmp_path):
    """vLLM 0.33.0, a comment appended to a backend file: every answer is kept, and
    the page is assembled from them without importing the interpreter (a lazy
    ``pyeval``; the kept records hold plain values)."""
    tree, cache = _copy(tmp_path, vllm_trees.tree("0.33.0")), tmp_path / "cache"
    args = ["--root", str(tree), "--cache-dir", str(cache), "-o", str(tmp_path / "page.md")]
    assert cli.main(args) == 0
    _append(tree / "vllm/v1/attention/backends/flex_attention.py", "# an edit\n")
    loaded = modules_loaded_by(args, cwd=tmp_path)
    evaluator = [m for m in loaded if m.startswith("sphinxext_attn.pyeval.")]
    assert [m for m in evaluator if m != "sphinxext_attn.pyeval.values"] == []
    cold = tmp_path / "cold.md"
    assert cli.main(["--root", str(tree), "--no-cache", "-o", str(cold)]) == 0
    assert (tmp_path / "page.md").read_text(encoding="utf-8") == cold.read_text(encoding="utf-8")
