"""Edges a sampled mutation run found unpinned in the evaluator, each test failing
with the mutant it was written for.

Mutants argued equivalent (no input tells them from the product):
- calls.call ``func.func.kind == "classmethod"`` -> ``is``: every kind is a literal
  of the package's own code, and CPython interns such identifier-like literals.
- ops.equal ``left.cls is right.cls`` -> ``==``: PyClass is ``eq=False`` (equality
  is identity).
- checks.run_checks ``found[0] is not body`` -> any other test of ``found[0]``:
  ``memo.units`` holds the body list itself, so while the entry lives no other
  list can have its id, and ``found[0]`` is always ``body``.
- machine ``rsplit("/", 1)[-1]`` -> ``rsplit("/", 2)[-1]``: the last piece is
  the same for any split count of at least one.
"""

from __future__ import annotations

import ast

import pytest

from sphinxext_attn.pyeval import Interpreter, Unknown
from sphinxext_attn.pyeval.values import NODE, External
from sphinxext_attn.source.tree import SourceTree


def test_setting_an_attribute_of_an_outside_object_is_unknown_where_it_is(tmp_path):
    it = Interpreter(SourceTree(tmp_path))
    with pytest.raises(Unknown) as raised:
        it.setattr(External("torch.ops"), "x", 1, NODE, "m.py")
    assert raised.value.where == "m.py"  # a node without a line: the file alone
    stmt = ast.parse("\n\nx.y = 1").body[0]
    with pytest.raises(Unknown) as raised:
        it.setattr(External("torch.ops"), "y", 1, stmt, "m.py")
    assert raised.value.where == "m.py:3" and "setting y" in str(raised.value)
