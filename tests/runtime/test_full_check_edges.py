"""vLLM's full check as the runtime tables ask it (runtime/full_check.py), at its
edges: a ``supports_combination`` that only returns None (nothing to narrow), one
that takes its parameters as ``*args`` (every parameter read), and the head sizes
tried for a column's rules."""

from __future__ import annotations

import ast
from types import SimpleNamespace

import pytest
from accepts_trees import one_checked_tree
from treebuilder import dedent, rows

from sphinxext_attn.analysis.pipeline import analyze
from sphinxext_attn.runtime.full_check import _head_values, _plain_none


def _function(source: str) -> SimpleNamespace:
    node = ast.parse(dedent(source)).body[0]
    if isinstance(node, ast.Assign):  # ``f = lambda ...``: the lambda itself
        return SimpleNamespace(node=node.value)
    return SimpleNamespace(node=node)


@pytest.mark.parametrize(
    ("source", "plain"),
    [
        ('def f(cls):\n    """Nothing to refuse."""\n    pass\n    return None\n', True),
        ("def f(cls):\n    return\n", True),
        ("async def f(cls):\n    pass\n", True),
        ("def f(cls):\n    ...\n", True),
        ('def f(cls):\n    """Doc."""\n    return "refused"\n', False),
        ("def f(cls):\n    pass\n    x = 1\n", False),
        ("def f(cls):\n    return 0\n", False),
        ("f = lambda cls: None\n", False),
    ],
)
def test_only_a_body_that_returns_none_alone_is_plain(source, plain):
    """Docstrings, ``pass`` and bare or None returns are read past; any other
    statement, or something that is not a ``def``, may refuse."""
    assert _plain_none(_function(source)) is plain  # type: ignore[arg-type]


def test_the_head_sizes_tried_for_a_column():
    assert _head_values("any") == [128]
    assert _head_values([64, 128, 64, "%16"]) == [128, 64]
    assert _head_values([{"min": 40, "multiple_of": 16}, 32]) == [48, 32]
    assert _head_values([{"min": None, "multiple_of": None}]) == [1]
    assert _head_values([{"min": 100}]) == [100]


STARRED = """
from vllm.v1.attention.backend import AttentionBackend


def _refusal(head_size, dtype, kv_cache_dtype, *rest):
    if head_size == 256:
        return "head size 256 needs the other kernel"
    if head_size == 512 and kv_cache_dtype != "fp8":
        return "head size 512 needs an fp8 cache"
    return None


class StarBackend(AttentionBackend):
    supported_kv_cache_dtypes = ["auto", "fp8"]

    @classmethod
    def get_supported_head_sizes(cls):
        return [128, 256, 512]

    @classmethod
    def supports_combination(cls, *args):
        return _refusal(*args)
"""


def test_a_check_taking_star_args_is_asked_on_every_parameter(tmp_path):
    """``*args`` passed on: which parameter is read is not known, so each is tried: 512 passes
    with an fp8 cache (kept), 256 is refused in every configuration (left out, with
    the note). Reading none of them would have left 512 out too."""
    module = "vllm/v1/attention/backends/star.py"
    row = rows(
        analyze(one_checked_tree(tmp_path, "STAR_ATTN", module, "StarBackend", STARRED)),
        "STAR_ATTN",
    )[0]
    assert row.supports["head_sizes"] == [128, 256, 512]
    assert row.accepts["head_sizes"] == [128, 512]
    assert 'answers "head size 256 needs the other kernel"' in row.notes["Head Sizes"]
