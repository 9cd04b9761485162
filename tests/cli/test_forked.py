"""The command line reads the page in a forked child while it evaluates the classes:
the result must not depend on whether the fork worked."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest
from runtime_trees import runtime_backend
from treebuilder import DEMO_TREE

from sphinxext_attn.analysis.pipeline import analyze
from sphinxext_attn.cli import decisions
from sphinxext_attn.cli.runcache import RunCache
from sphinxext_attn.model.selection import Config
from sphinxext_attn.parallel import forked
from sphinxext_attn.pyeval import Unknown
from sphinxext_attn.render.jsonout import render_json as to_json

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="this platform has no os.fork")

BODY = """
@classmethod
def get_supported_head_sizes(cls):
    return [64, 128]

@classmethod
def supports_sink(cls):
    return torch.cuda.is_available()
"""


def _said(analysis: Any) -> list[str]:
    """Every diagnostic with its place, as the command line prints them."""
    return [f"{d.location}: {d.message}" for d in analysis.diagnostics]


@needs_fork
def test_the_childs_result_comes_back_whole() -> None:
    unknown = Unknown("a call into torch", "x.py", 3)
    back = forked.Forked(lambda: {"value": [1, 2], "unknown": unknown}).result()
    assert back is not None and back["value"] == [1, 2]
    assert (back["unknown"].reason, back["unknown"].where) == ("a call into torch", "x.py:3")


@needs_fork
def test_a_child_that_fails_returns_none() -> None:
    def boom() -> None:
        raise RuntimeError("the child broke")

    assert forked.Forked(boom).result() is None
    assert forked.Forked(lambda: threading.Lock()).result() is None  # does not pickle


def test_no_fork_while_another_thread_runs() -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not forked.can_fork()
    finally:
        stop.set()
        other.join()


@needs_fork
def test_parallel_analysis_equals_sequential(tmp_path: Path) -> None:
    root = runtime_backend(tmp_path, BODY)
    alone = analyze(root, parallel=False)
    together = analyze(root, parallel=True)
    assert to_json(together) == to_json(alone)
    assert _said(together) == _said(alone)
    assert together.profile == "runtime"
    assert any("torch" in str(d) for d in together.diagnostics)  # the unknown came through


@needs_fork
@pytest.mark.parametrize("child_works", [True, False])
def test_page_profile_syntax_checks_in_a_child_with_the_same_warnings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, child_works: bool
) -> None:
    """vllm-page: with a core to spare, a child syntax-checks the backend files whole
    while the tables are read; files it finds broken are checked here without their
    class, so the warnings are those of a run without the child."""
    flash = "vllm/v1/attention/backends/flash_attn.py"
    triton = "vllm/v1/attention/backends/triton_attn.py"
    root = runtime_backend(tmp_path, BODY)
    for rel, line in ((flash, "def broken(:\n"), (triton, "x = = 1\n")):
        path = root / rel
        path.write_text(path.read_text(encoding="utf-8") + line, encoding="utf-8")
    alone = analyze(root, profile="vllm-page", parallel=False)
    monkeypatch.setattr(forked, "spare_core", lambda: True)
    started: list[object] = []
    monkeypatch.setattr(forked.Forked, "__init__", _noting(forked.Forked.__init__, started))
    if not child_works:  # the child's answer is lost: this process checks the files
        result = forked.Forked.result
        monkeypatch.setattr(forked.Forked, "result", lambda self: (result(self), None)[1])
    together = analyze(root, profile="vllm-page", parallel=True)
    assert len(started) == 1
    assert to_json(together) == to_json(alone)
    assert _said(together) == _said(alone)
    assert [d.location.path for d in alone.diagnostics if "syntax" in d.message] == [
        flash,
        triton,
    ]


def test_page_profile_checks_here_without_a_spare_core(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a busy machine the child's whole files would be more work than the rests
    checked here: no child is started."""
    root = runtime_backend(tmp_path, BODY)
    monkeypatch.setattr(forked, "spare_core", lambda: False)
    started: list[object] = []
    monkeypatch.setattr(forked.Forked, "__init__", _noting(forked.Forked.__init__, started))
    assert to_json(analyze(root, profile="vllm-page", parallel=True)) == to_json(
        analyze(root, profile="vllm-page", parallel=False)
    )
    assert started == []


def _noting(init: Any, started: list[object]) -> Any:
    """``Forked.__init__`` that notes each child started."""

    def noted(self: forked.Forked, work: Any) -> None:
        started.append(work)
        init(self, work)

    return noted


@needs_fork
def test_a_failed_child_falls_back_to_reading_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A helper only the evaluator reads, with a syntax error: its warning must
    # not change with the order in which the page and the classes are read.
    root = runtime_backend(
        tmp_path,
        BODY + "\n@classmethod\ndef supports_mm_prefix(cls):\n    return helper()\n",
        header="from vllm.v1.attention.backends.broken_helper import helper\n",
        extra={"vllm/v1/attention/backends/broken_helper.py": "def helper(:\n    return True\n"},
    )
    alone = analyze(root)
    assert "vllm/v1/attention/backends/broken_helper.py:1: syntax error" in " ".join(_said(alone))

    class Broken:
        def __init__(self, work: object) -> None:
            pass

        def result(self) -> None:
            return None

    monkeypatch.setattr(forked, "Forked", Broken)
    fallen_back = analyze(root, parallel=True)
    assert to_json(fallen_back) == to_json(alone)
    assert _said(fallen_back) == _said(alone)


CASES = [
    Config(capability=cap, dtype=dtype, head_size=head, use_mla=mla, block_size=block)
    for cap in ("8.0", "9.0", "10.0", "12.0")
    for dtype in ("bf16", "fp32")
    for head, mla, block in ((64, False, None), (576, True, 64), (80, False, 16))
]


def _decide_all(monkeypatch: pytest.MonkeyPatch, fork: bool) -> tuple[list, list[str]]:
    answers = decisions.Answers(DEMO_TREE, RunCache(None))
    with monkeypatch.context() as patch:
        patch.setattr(decisions, "MIN_FORKED_CASES", 2)
        patch.setattr(forked, "can_fork", lambda: fork)
        results = answers.decide_all(CASES * 2)
    assert answers.tree is not None
    return results, sorted({*answers.paths, *answers.tree.files, *answers.tree.directories})


@needs_fork
def test_forked_select_cases_equal_sequential(monkeypatch: pytest.MonkeyPatch) -> None:
    together, read_together = _decide_all(monkeypatch, fork=True)
    alone, read_alone = _decide_all(monkeypatch, fork=False)
    assert together == alone
    assert len(together) == 2 * len(CASES)
    assert {r["selected"] for r in together} > {None}  # several different picks
    assert read_together == read_alone  # what the child read is kept for the cache


def test_a_core_is_spare_only_below_the_cores_less_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.2, 0.0, 0.0))
    assert forked.spare_core()
    monkeypatch.setattr(os, "getloadavg", lambda: (1.6, 0.0, 0.0))
    assert not forked.spare_core()


@needs_fork
@pytest.mark.parametrize("child_works", [True, False])
def test_the_child_answers_the_second_half_or_this_process_does(
    monkeypatch: pytest.MonkeyPatch, child_works: bool
) -> None:
    """With the child's answers this process decides only the first case and the first
    half of the rest; without them (the child failed), every case, the same answers."""
    alone, _ = _decide_all(monkeypatch, fork=False)
    answers = decisions.Answers(DEMO_TREE, RunCache(None))
    here: list[Any] = []
    decide = answers.decide

    def counted(*args: Any) -> Any:
        if decisions._key(*args) not in answers.known:  # evaluated here, not looked up
            here.append(args)
        return decide(*args)

    class Failed:
        def __init__(self, work: Any) -> None:
            pass

        def result(self) -> None:
            return None

    with monkeypatch.context() as patch:
        patch.setattr(decisions, "MIN_FORKED_CASES", 2)
        patch.setattr(forked, "can_fork", lambda: True)
        patch.setattr(answers, "decide", counted)
        if not child_works:
            patch.setattr(forked, "Forked", Failed)
        assert answers.decide_all(CASES * 2) == alone
    rest = len(CASES) - 1
    assert len(here) == (1 + rest // 2 if child_works else len(CASES))
