"""Where vLLM states a rejection reason: literals by their text, f-strings by their
fixed parts, the backend's own classes first; on a real release nearly every reason.

Mutant argued equivalent: reason_sources._pattern ``".*?"`` -> ``".*"`` for an
interpolated part: a pattern is only ever used with ``fullmatch``, where a lazy and
a greedy wildcard accept the same texts.
"""

from __future__ import annotations

import ast
import json

import pytest
import vllm_trees
from runtime_trees import runtime_backend
from treebuilder import dedent

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.records import Location
from sphinxext_attn.model.selection import Config
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.selection.reason_sources import (
    MAX_PATTERN,
    SELECTION_FILES,
    ReasonLocator,
    _pattern,
)
from sphinxext_attn.source.tree import SourceTree

HELPERS = "vllm/v1/attention/my_helpers.py"
HELPER_SOURCE = """
def check(head_size):
    if head_size > 256:
        return (False, f"head size {head_size} is above the kernel's limit of 256")
    return (True, "fine")


def message():
    return "MyBackend needs a Hopper device"
"""

BODY = """
@classmethod
def supports_combination(cls, head_size):
    ok, why = check(head_size)
    return None if ok else why
"""


def test_literals_and_fstrings_are_found_at_their_line(tmp_path):
    header = "from vllm.v1.attention.my_helpers import check\n"
    root = runtime_backend(tmp_path, BODY, header=header, extra={HELPERS: dedent(HELPER_SOURCE)})
    interp = Interpreter(SourceTree(root), Machine())
    interp.tree.text(HELPERS)  # the evaluation read it
    locator = ReasonLocator(interp)
    fstring = locator.locate("MY_ATTN", "head size 512 is above the kernel's limit of 256")
    assert fstring == Location(HELPERS, 3)
    assert locator.locate("MY_ATTN", "MyBackend needs a Hopper device") == Location(HELPERS, 8)
    assert locator.locate("MY_ATTN", "no such words anywhere in the tree") is None


@pytest.mark.realtree
def test_reasons_of_vllms_own_cases_are_located():
    """Every reason of the first 200 cases (2,013 of them) is found where vLLM
    states it: the reasons not located are an exact list, empty."""
    tree = vllm_trees.tree("0.33.0")
    path = vllm_trees.shared_dir() / "vllm" / "select" / "select-0.33.0.json"
    cases = json.loads(path.read_text(encoding="utf-8"))[:200]
    selector = Selector(Interpreter(SourceTree(tree), Machine()))
    total = 0
    not_located = set()
    for case in cases:
        decision = selector.explain(selector.decide(Config.from_case(case)))
        for name, reasons in decision.rejected.items():
            total += len(reasons)
            for reason, where in zip(reasons, decision.sources[name], strict=True):
                if not where:
                    not_located.add((name, reason))
    assert total > 1000
    assert sorted(not_located) == []


ESCAPED = r"""
REASONS = {
    "first": "needs a \x48opper device",
    "needs a \x48opper device": 2,
}
"""


def test_a_literal_written_with_escapes_is_found_at_its_first_line(tmp_path):
    """Not in the text as written: the statements are parsed, and of the two
    literals giving the reason (a value, then a key below it) the first is named."""
    root = runtime_backend(tmp_path, BODY, extra={HELPERS: dedent(ESCAPED)})
    interp = Interpreter(SourceTree(root), Machine())
    interp.tree.text(HELPERS)
    locator = ReasonLocator(interp)
    assert locator.locate("MY_ATTN", "needs a Hopper device") == Location(HELPERS, 2)


def _fstring(text: str) -> ast.JoinedStr:
    node = ast.parse(text, mode="eval").body
    assert isinstance(node, ast.JoinedStr)
    return node


def test_an_fstring_is_a_pattern_only_with_enough_fixed_text():
    pattern = _pattern(_fstring('f"head size {h} is not supported"'))
    assert pattern is not None and pattern.fullmatch("head size 80 is not supported")
    assert not pattern.fullmatch("block size 80 is not supported")
    assert _pattern(_fstring('f"{kind}: {h} bad"')) is None  # 6 fixed characters
    assert _pattern(_fstring('f"{kind}: size {h} bad!"')) is not None  # 12 of them
    # the pattern is ".*?" and the fixed text: up to MAX_PATTERN characters long
    at_limit = 'f"{a}' + "x" * (MAX_PATTERN - 3) + '"'
    assert _pattern(_fstring(at_limit)) is not None
    over = 'f"{a}' + "x" * (MAX_PATTERN - 2) + '"'
    assert _pattern(_fstring(over)) is None


def test_a_backend_the_registry_lacks_is_searched_in_the_selection_files(tmp_path):
    runtime_backend(tmp_path, "pass\n")
    locator = ReasonLocator(Interpreter(SourceTree(tmp_path), Machine()))
    assert locator._paths("NOT_A_BACKEND") == list(SELECTION_FILES)
    # the class's own module, then its bases' (the interface, a selection file too)
    assert locator._paths("MY_ATTN") == [
        "vllm/v1/attention/backends/my_attn.py",
        "vllm/v1/attention/backend.py",
        "vllm/platforms/cuda.py",
    ]


def test_a_reason_of_a_class_without_a_resolution_order_is_found_in_its_file(tmp_path):
    """``class MyBackend(AttentionBackend, Mixin)`` with ``Mixin`` a subclass of
    ``AttentionBackend`` has no consistent resolution order (CPython's TypeError):
    the class's own file is still searched (a raise from the order escaped when
    only an unknown was caught)."""
    source = dedent(
        """
        from vllm.v1.attention.backend import AttentionBackend


        class Mixin(AttentionBackend):
            pass


        class MyBackend(AttentionBackend, Mixin):
            @classmethod
            def reasons(cls):
                return ["this kernel needs a very particular device"]
        """
    )
    module = "vllm/v1/attention/backends/my_attn.py"
    root = runtime_backend(tmp_path, "", extra={module: source})
    locator = ReasonLocator(Interpreter(SourceTree(root), Machine()))
    found = locator.locate("MY_ATTN", "this kernel needs a very particular device")
    assert found == Location(
        module,
        source.splitlines().index('        return ["this kernel needs a very particular device"]')
        + 1,
    )
