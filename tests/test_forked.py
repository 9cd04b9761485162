"""The command line reads the page in a forked child while it evaluates the classes:
the result must not depend on whether the fork worked."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from treebuilder import runtime_backend

from sphinxext_attn.core import forked
from sphinxext_attn.core.analyze import analyze
from sphinxext_attn.core.pyeval import Unknown
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
    assert together.profile == "runtime"
    assert any("torch" in str(d) for d in together.diagnostics)  # the unknown came through


@needs_fork
def test_a_failed_child_falls_back_to_reading_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = runtime_backend(tmp_path, BODY)
    expected = to_json(analyze(root))

    class Broken:
        def __init__(self, work: object) -> None:
            pass

        def result(self) -> None:
            return None

    monkeypatch.setattr(forked, "Forked", Broken)
    assert to_json(analyze(root, parallel=True)) == expected
