"""CUDA's priority function read as lists (runtime/priority_paths.py,
priority_titles.py) where it cannot be: a parameter with no known values, a
lambda, a function that raises; a parameter with a constant default; and the cell
texts of head sizes and capabilities at their edges."""

from __future__ import annotations

from pathlib import Path

import pytest
from runtime_trees import runtime_tree
from treebuilder import CUDA, dedent

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter, Unknown
from sphinxext_attn.runtime.cell_text import capability_text, head_size_text, size_rule
from sphinxext_attn.runtime.priority_paths import explore, priority_function
from sphinxext_attn.runtime.priority_titles import safe_evaluated_priorities
from sphinxext_attn.source.tree import SourceTree

ENUM = "from vllm.v1.attention.backends.registry import AttentionBackendEnum as E\n\n\n"


def _interp(root: Path, body: str) -> Interpreter:
    runtime_tree(root, {CUDA: ENUM + dedent(body)})
    return Interpreter(SourceTree(root), Machine())


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (
            """
            def _get_backend_priorities(layout):
                return [E.FLASH_ATTN] if layout.wide else [E.FLASHINFER]
            """,
            "parameter layout of _get_backend_priorities has no known values",
        ),
        ("_get_backend_priorities = lambda: [E.FLASH_ATTN]\n", "is a lambda"),
        (
            """
            def _get_backend_priorities(use_mla: bool):
                if use_mla:
                    raise ValueError("no MLA here")
                return [E.FLASH_ATTN]
            """,
            "_get_backend_priorities raised ValueError",
        ),
    ],
    ids=["unknown-parameter", "lambda", "raises"],
)
def test_a_priority_function_that_cannot_be_explored_is_unknown(tmp_path, body, reason):
    interp = _interp(tmp_path, body)
    lists, why = safe_evaluated_priorities(interp)
    assert lists == [] and isinstance(why, Unknown)
    assert reason in str(why), str(why)


def test_a_parameter_with_a_constant_default_takes_that_value(tmp_path):
    interp = _interp(
        tmp_path,
        """
        def _get_backend_priorities(use_mla: bool, mode="fast"):
            if mode == "fast" and not use_mla:
                return [E.FLASHINFER]
            return [E.FLASH_ATTN]
        """,
    )
    func = priority_function(interp)
    assert func is not None
    choices, paths = explore(interp, func)
    assert [c.label for c in choices["mode"]] == ["'fast'"]
    assert {p.backends for p in paths} == {("FLASHINFER",), ("FLASH_ATTN",)}


def test_head_size_texts_at_their_edges():
    assert head_size_text("any") == ()
    assert head_size_text([]) == ("None",)
    assert head_size_text([size_rule(32, 256, 32)]) == ("%32", "≤256")
    assert head_size_text([64, 80, size_rule(256, None, 128)]) == ("64, 80 or %128, ≥256",)


def test_no_capability_accepted_is_none():
    assert capability_text([]) == "None"
    grid = [(8, 0), (9, 0)]
    assert capability_text(grid, grid) == "Any"
