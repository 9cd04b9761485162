"""The set of head sizes a JSON ``supports.head_sizes`` value stands for, as
exactcmp reads it: ``"any"``, or ints and ``{"min", "max", "multiple_of"}`` rules
whose union is the set. Shared by the evaluator's and the real trees' tests."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from runtime_trees import runtime_backend

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.pyeval.values import NODE
from sphinxext_attn.source.tree import SourceTree

#: every head size the tests compare
SIZES = range(1, 4097)
MODULE = "vllm.v1.attention.backends.my_attn"


def expand(items: Any, sizes: Iterable[int]) -> set[int] | None:
    """The sizes of ``sizes`` the items accept; None when ``items`` is no item list."""
    universe = set(sizes)
    if items == "any":
        return universe
    if not isinstance(items, list | tuple):
        return None
    out: set[int] = set()
    for item in items:
        if isinstance(item, int):
            out.add(item)
            continue
        lo, hi, step = item["min"], item["max"], item["multiple_of"]
        out |= {
            h
            for h in universe
            if (lo is None or h >= lo) and (hi is None or h <= hi) and (not step or h % step == 0)
        }
    return out & universe


def backend(root: Path, body: str) -> tuple[Interpreter, Any]:
    """An interpreter on a small tree whose backend class has ``body``, and the class."""
    runtime_backend(root, body)
    it = Interpreter(SourceTree(root), Machine())
    return it, it.module_attr(it.module(MODULE), "MyBackend", NODE)


def head_size_method(line_body: str) -> str:
    """A class body whose ``supports_head_size`` runs ``line_body`` (its list: 72, 80)."""
    inner = "".join(f"    {line}\n" for line in line_body.splitlines())
    lists = "@classmethod\ndef get_supported_head_sizes(cls):\n    return [72, 80]\n\n"
    return lists + "@classmethod\ndef supports_head_size(cls, head_size):\n" + inner
