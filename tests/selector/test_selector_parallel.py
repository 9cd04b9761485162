"""The selector's table asked in two processes (and its agreement check decided in a
third) is the table asked in one: the same data, files read and agreement, also
when a child fails (this process then asks everything itself)."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from treebuilder import DEMO_TREE

from sphinxext_attn.parallel import forked
from sphinxext_attn.selector import parallel as selector_parallel
from sphinxext_attn.selector.table import SelectorTable, build_selector_table

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="this platform has no os.fork")


def _everything(built: SelectorTable) -> dict[str, Any]:
    return {
        "data": json.dumps(built.shipped(), sort_keys=True),
        "agreement": built.agreement,
        "files": built.files,
        "directories": sorted(built.directories),
        "problems": built.problems,
        "error": built.error,
    }


def _build(platforms: tuple[str, ...] = ("cuda",)) -> dict[str, Any]:
    return _everything(build_selector_table(str(DEMO_TREE), sample=40, platforms=platforms))


@pytest.fixture(autouse=True)
def spare_core(monkeypatch: pytest.MonkeyPatch) -> None:
    """Children are forked whatever the machine's load (see ``forked.spare_core``)."""
    monkeypatch.setattr(forked, "spare_core", lambda: True)


@pytest.fixture(scope="module")
def alone() -> dict[str, Any]:
    """The demo tree's tables built in this process only."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(forked, "can_fork", lambda: False)
        return _build(("cuda", "cpu"))


@needs_fork
def test_two_processes_build_the_table_one_builds(alone: dict[str, Any]) -> None:
    children: list[int] = []
    start = forked.Forked.__init__

    def counted(self: forked.Forked, work: Any) -> None:
        start(self, work)
        children.append(self._pid)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(forked.Forked, "__init__", counted)
        assert _build(("cuda", "cpu")) == alone
    assert len(children) == 2  # the capabilities' half and the agreement's decisions


@needs_fork
def test_what_the_child_read_is_read_here(
    alone: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """All the questions asked by the child: the files they read are the table's too."""
    monkeypatch.setattr(selector_parallel, "split", lambda caps: ([], caps))
    assert _build(("cuda", "cpu")) == alone


@needs_fork
def test_a_failed_child_leaves_the_table_alone(
    alone: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any) -> Any:
        raise RuntimeError("the child broke")

    monkeypatch.setattr(selector_parallel, "_asked_in_child", broken)
    monkeypatch.setattr(selector_parallel, "_decisions", broken)
    assert _build(("cuda", "cpu")) == alone


@needs_fork
def test_a_cancelled_child_is_gone() -> None:
    import time

    child = forked.Forked(lambda: time.sleep(60))
    child.cancel()
    with pytest.raises(ChildProcessError):
        os.waitpid(child._pid, os.WNOHANG)
