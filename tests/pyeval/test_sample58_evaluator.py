"""Edges of the evaluator a sampled mutation run (seed 58) found unpinned: which
imports ask the world about a module the build writes, where the unknown of an
exception class with its own ``__init__`` is placed when called from outside the
tree, and the integer sets being values (hashable, immutable)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from sphinxext_attn.pyeval import Interpreter, Unknown, World
from sphinxext_attn.pyeval.intsets import IntSet, run
from sphinxext_attn.pyeval.values import NODE, Value
from sphinxext_attn.source.tree import SourceTree

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
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "__init__.py").write_text("")
    (tmp_path / "vllm" / "code.py").write_text(IMPORTS)
    world = _Recording()
    interp = Interpreter(SourceTree(tmp_path), world)
    module = interp.module("vllm.code")
    assert module is not None

    def call(name: str) -> Value:
        return interp.call(module.lookup(name, interp, NODE), [], {}, NODE, "")

    for name in ("own", "later", "earlier"):
        call(name)
    assert world.built == ["vllm._C"]


def test_an_exception_class_with_its_own_init_called_from_outside_has_no_line(
    tmp_path: Path,
) -> None:
    """Created from a synthetic node (no line of the tree), the unknown names the
    file only (``lineno`` 0 -> 1 placed it on line 1)."""
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "__init__.py").write_text("")
    (tmp_path / "vllm" / "err.py").write_text(
        "class Err(ValueError):\n    def __init__(self):\n        self.a = 1\n"
    )
    interp = Interpreter(SourceTree(tmp_path))
    module = interp.module("vllm.err")
    assert module is not None
    err = module.lookup("Err", interp, NODE)
    with pytest.raises(Unknown) as caught:
        interp.call(err, [], {}, NODE, "vllm/x.py")
    assert (caught.value.path, caught.value.line) == ("vllm/x.py", 0)


def test_an_integer_set_is_a_value() -> None:
    """Equal sets hash alike and are one dict key; a set cannot be changed in place
    (``frozen=False`` made it unhashable and mutable)."""
    a = IntSet.of([run(8, 256, 8)])
    b = IntSet.of([run(8, 256, 8)])
    assert a == b and hash(a) == hash(b) and len({a: 1, b: 2}) == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.runs = ()  # type: ignore[misc]
