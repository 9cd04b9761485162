"""Edges of the evaluator a sampled mutation run (seed 60) found unpinned, each test
failing with the mutant it was written for.

Mutants argued equivalent (no input tells them from the product):
- checks ``key_part(v, False) is not NO_KEY`` -> ``!=``: ``NO_KEY`` is a bare
  ``object()``; every key part is a tuple, a plain value, or a class, member,
  external or function of the evaluator, none of whose ``__eq__`` answers True for
  another object (dataclass-generated ones return NotImplemented for another
  class), so ``!=`` falls back to identity as ``is not`` does.
- intsets._order ``0 if r.hi is None else r.hi`` -> any other number for None: the
  field before it (``r.hi is None``) already orders every endless run after every
  run with an end, and two endless runs get the same number either way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from evaluator import call_in, tiny_package

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter, Raised, Unknown
from sphinxext_attn.pyeval.values import NODE, Budget, External
from sphinxext_attn.source.tree import SourceTree

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


def test_a_dict_lookup_is_charged_one_step_and_one_per_key(tmp_path: Path) -> None:
    """Exactly ``1 + len``, found first or last (``>>`` charged nothing)."""
    interp = Interpreter(SourceTree(tmp_path), Machine())
    table = {i: i * 2 for i in range(64)}
    for key, value in ((63, 126), (0, 0)):
        interp.budget = Budget(steps=1000)
        assert interp.subscript(table, key, NODE, "x.py") == value
        assert interp.budget.steps == 1000 - 65


EQ = """\
from dataclasses import dataclass


class Eq:
    def __eq__(self, other):
        return True


class Hashed(Eq):
    __hash__ = object.__hash__
"""
UNHASHABLE = EQ + "\n\n@dataclass\nclass R:\n    e: Eq = Eq()\n\n\ndef make():\n    return R()\n"
HASHABLE = EQ + (
    "\n\n@dataclass\nclass S:\n    h: Hashed = Hashed()\n\n\ndef make():\n"
    "    return S().h is S().h\n"
)


def test_a_default_whose_class_has_eq_but_no_hash_is_a_mutable_default(tmp_path: Path) -> None:
    """A class defining ``__eq__`` alone has ``__hash__ = None``: as a dataclass
    default it is CPython's ValueError, not evaluated here; one that sets
    ``__hash__`` again is a default shared by every instance (``own is not MISSING``
    negated took every class without a ``__hash__`` of its own for hashable)."""
    with pytest.raises(ValueError, match="mutable default"):
        exec(compile(UNHASHABLE, "<defaults>", "exec", dont_inherit=True), {})
    namespace: dict[str, Any] = {}
    exec(compile(HASHABLE, "<defaults>", "exec", dont_inherit=True), namespace)
    assert namespace["make"]() is True
    files = {"vllm/unhashable.py": UNHASHABLE, "vllm/hashable.py": HASHABLE}
    interp = tiny_package(tmp_path, files)
    with pytest.raises(Unknown, match=r"R\.e: a mutable default \(ValueError\)"):
        call_in(interp, "vllm.unhashable", "make")
    assert call_in(interp, "vllm.hashable", "make") is True


def test_an_import_alias_is_found_by_a_name_made_at_run_time(tmp_path: Path) -> None:
    """``getattr(a, "my" + "os")`` asks module ``a`` for ``myos`` with a string made
    while evaluating (not the parser's interned one): ``import os as myos`` still
    binds it (``alias.asname == name`` -> ``is`` did not)."""
    files = {
        "vllm/a.py": "import os as myos\n",
        "vllm/b.py": "from vllm import a\n\n\ndef f():\n    return getattr(a, 'my' + 'os')\n",
    }
    interp = tiny_package(tmp_path, files)
    found = call_in(interp, "vllm.b", "f")
    assert isinstance(found, External) and found.qualname == "os"


MRO = """\
import abc


class A(abc.ABC):
    x = 1


class M(A):
    pass


class B(A, M):
    pass


def read():
    return B.x
"""


def test_bases_no_order_can_follow_raise_as_in_cpython(tmp_path: Path) -> None:
    """``class B(A, M)`` with ``M`` a subclass of ``A``: CPython refuses to make the
    class (TypeError, in its own words); every question about it raises the same
    (an order was made up before, taking the first base, and ``B.x`` answered 1)."""
    with pytest.raises(TypeError) as cpython:
        exec(compile(MRO, "<mro>", "exec", dont_inherit=True), {})
    interp = tiny_package(tmp_path, {"vllm/mro.py": MRO})
    with pytest.raises(Raised) as ours:
        call_in(interp, "vllm.mro", "read")
    assert (ours.value.kind, ours.value.message) == ("TypeError", str(cpython.value))
