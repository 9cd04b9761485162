"""Edges of the evaluator a sampled mutation run (seed 58) found unpinned: which
imports ask the world about a module the build writes, where an unknown is
placed when a class is called from outside the tree (an exception class with its
own ``__init__``, a dataclass without one), and the integer sets being values
(hashable, immutable)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from evaluator import call_in, tiny_package

from sphinxext_attn.pyeval import Interpreter, Unknown, World
from sphinxext_attn.pyeval.intsets import IntSet, run

IMPORTS = """\
from vllm._C import ops
from zzz.native import fast
from aaa.native import slow


def own():
    return ops


def later():
    return fast


def earlier():
    return slow
"""


class _Recording(World):
    """Notes every module of the package the tree lacks that an import asks for."""

    def __init__(self) -> None:
        super().__init__()
        self.built: list[str] = []

    def check_built_module(self, interp: Interpreter, dotted: str) -> None:
        self.built.append(dotted)


def test_only_the_packages_own_missing_module_is_a_built_one(tmp_path: Path) -> None:
    """``from vllm._C import ops`` (the package's own, written by its build) asks the
    world; ``from zzz.native ...`` and ``from aaa.native ...`` are other packages,
    whatever their names sort as (``==`` -> ``>=`` asked about ``zzz.native``)."""
    world = _Recording()
    interp = tiny_package(tmp_path, {"vllm/code.py": IMPORTS}, world)
    for name in ("own", "later", "earlier"):
        call_in(interp, "vllm.code", name)
    assert world.built == ["vllm._C"]


def test_an_exception_class_with_its_own_init_called_from_outside_has_no_line(
    tmp_path: Path,
) -> None:
    """Created from a synthetic node (no line of the tree), the unknown names the
    file only (``lineno`` 0 -> 1 placed it on line 1)."""
    source = "class Err(ValueError):\n    def __init__(self):\n        self.a = 1\n"
    interp = tiny_package(tmp_path, {"vllm/err.py": source})
    with pytest.raises(Unknown) as caught:
        call_in(interp, "vllm.err", "Err", path="vllm/x.py")
    assert (caught.value.path, caught.value.line) == ("vllm/x.py", 0)


def test_a_dataclass_without_init_called_from_outside_has_no_line(tmp_path: Path) -> None:
    """``@dataclass(init=False)`` is not evaluated when called; from a synthetic node
    the unknown names the file only (instances ``lineno`` 0 -> -1 placed it on line
    -1)."""
    source = "from dataclasses import dataclass\n\n\n@dataclass(init=False)\nclass N:\n    a: int"
    interp = tiny_package(tmp_path, {"vllm/rec.py": source})
    with pytest.raises(Unknown, match=r"N\(init=False\) not evaluated") as caught:
        call_in(interp, "vllm.rec", "N", path="vllm/x.py")
    assert (caught.value.path, caught.value.line) == ("vllm/x.py", 0)


def test_an_integer_set_is_a_value() -> None:
    """Equal sets hash alike and are one dict key; a set cannot be changed in place
    (``frozen=False`` made it unhashable and mutable)."""
    a = IntSet.of([run(8, 256, 8)])
    b = IntSet.of([run(8, 256, 8)])
    assert a == b and hash(a) == hash(b) and len({a: 1, b: 2}) == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.runs = ()  # type: ignore[misc]
