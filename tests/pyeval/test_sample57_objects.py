"""Edges of pyeval/objects a sampled mutation run found unpinned: where an unknown
dict key is placed when the call has no line of the tree, and which comparisons a
:class:`World` is asked to answer."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from evaluator import call_in, load, tiny_package

from sphinxext_attn.pyeval import Interpreter, Unknown, World
from sphinxext_attn.pyeval.abstract import AbstractInt, Explorer
from sphinxext_attn.pyeval.values import NODE, External, Value


def test_an_unknown_key_of_a_call_from_outside_the_tree_names_the_file_only(
    tmp_path: Path,
) -> None:
    """``dict()`` called from outside the tree (its node is synthetic: no line) with a
    head size as a key: the unknown names the file and no line, as every other
    place of a synthetic node does (objects.hashable: ``lineno`` 0 -> 1 placed it on
    line 1)."""
    it, cls = load(tmp_path, "make = dict\n")
    make = it.getattr(cls, "make", NODE, "")
    head_size = AbstractInt(Explorer([]))
    with pytest.raises(Unknown) as caught:
        it.call(make, [[(head_size, 1)]], {}, NODE, "vllm/x.py")
    assert (caught.value.path, caught.value.line) == ("vllm/x.py", 0)
    assert str(caught.value) == "a head size used as a key is not evaluated (vllm/x.py)"


CODE = """\
from somelib import VERSION


def new_enough():
    return VERSION >= 2


def old_enough():
    return 2 <= VERSION


def plain():
    return 1 > 2, 'a' == 'b', 3 in [4]
"""


class _Versioned(World):
    """A library's knowledge that answers yes to every comparison it is asked (its
    ``VERSION`` is new enough): only those with a name from outside the tree are its."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[tuple[Value, Value]] = []

    def compare(self, interp: Interpreter, op: ast.cmpop, left: Value, right: Value) -> bool:
        self.asked.append((left, right))
        return True


def test_the_world_answers_comparisons_with_an_outside_name_on_either_side(
    tmp_path: Path,
) -> None:
    """objects.compare asks the world when either side is from outside the tree,
    and never about two values of the tree (``isinstance(left, External)`` negated
    skipped ``VERSION >= 2`` and asked about ``1 > 2``)."""
    world = _Versioned()
    interp = tiny_package(tmp_path, {"vllm/code.py": CODE}, world)

    def call(name: str) -> Value:
        return call_in(interp, "vllm.code", name)

    version = External("somelib.VERSION")
    assert call("new_enough") is True
    assert call("old_enough") is True
    assert world.asked == [(version, 2), (2, version)]
    assert call("plain") == (False, False, False)
    assert len(world.asked) == 2  # plain values are compared as Python does
