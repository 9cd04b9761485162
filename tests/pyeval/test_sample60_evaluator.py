"""Edges of the evaluator a sampled mutation run (seed 60) found unpinned, each test
failing with the mutant it was written for.

Mutants argued equivalent (no input tells them from the product):
- intsets._order ``0 if r.hi is None else r.hi`` -> any other number for None: the
  field before it (``r.hi is None``) already orders every endless run after every
  run with an end, and two endless runs get the same number either way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluator import call_in, tiny_package

SOURCE = """\
def big_dict():
    d = {i: i * 2 for i in range(64)}
    return d[63], d[0]
"""


def _python(name: str) -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(SOURCE, "<sample60>", "exec", dont_inherit=True), namespace)
    return namespace[name]()


def test_a_key_looked_up_in_a_big_dict_costs_a_step_per_key(tmp_path: Path) -> None:
    """A lookup is charged one step per key it may be compared with, so a dict of
    64 keys is well within any budget (``1 + len`` -> ``1 << len`` charged 2**64)."""
    interp = tiny_package(tmp_path, {"vllm/code.py": SOURCE})
    assert call_in(interp, "vllm.code", "big_dict") == _python("big_dict") == (126, 0)
