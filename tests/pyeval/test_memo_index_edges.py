"""Edges of the evaluator's indexes and memos a sampled mutation run (seed 59)
found unpinned: names bound after a loop in a module or class body, and a call
memo that must not take two tuples holding different lists for one argument."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluator import call_in, tiny_package

SOURCE = """\
for _i in range(2):
    pass

X = 1


class C:
    for _j in range(2):
        pass
    y = 2


def after_loops():
    return X, C.y


def first(t):
    return t[0][0]


def two_tuples():
    return first(([1],)), first(([2],))
"""


def _python(name: str) -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(SOURCE, "<edges>", "exec", dont_inherit=True), namespace)
    return namespace[name]()


def test_names_bound_after_a_loop_are_indexed(tmp_path: Path) -> None:
    """A loop is indexed as a binding the evaluator does not run; the statements
    after it are indexed too (``continue`` -> ``break`` stopped at the loop, and
    ``X`` and ``C.y`` were not found)."""
    interp = tiny_package(tmp_path, {"vllm/code.py": SOURCE})
    assert call_in(interp, "vllm.code", "after_loops") == _python("after_loops") == (1, 2)


def test_a_tuple_holding_a_list_is_no_memo_key(tmp_path: Path) -> None:
    """``first(([1],))`` then ``first(([2],))``: a list cannot key the call memo,
    nor can a tuple holding one (a key of the tuple's other parts answered the
    second call with the first's 1)."""
    interp = tiny_package(tmp_path, {"vllm/code.py": SOURCE})
    assert call_in(interp, "vllm.code", "two_tuples") == _python("two_tuples") == (1, 2)
