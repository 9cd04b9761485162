"""A backend asked for on a platform that decides by rules
(selection/rule_requests.py): the enum member it is passed as, and the platform's
own log line quoted where it answers another backend."""

from __future__ import annotations

import ast
from types import SimpleNamespace

import pytest
from treebuilder import DEMO_TREE

from sphinxext_attn.model.selection import Decision
from sphinxext_attn.pyeval import Bound, Interpreter, Unknown
from sphinxext_attn.selection.rule_requests import _log_line, note_request, requested_member
from sphinxext_attn.source.tree import SourceTree

METHOD = """
def get_attn_backend_cls(cls, selected_backend, attn_selector_config):
    logger.isEnabledFor(10)
    log.info(message)
    logger.info("Cannot use %s (%s): TRITON_ATTN on this platform", selected_backend, why)
    logger.warning("TRITON_ATTN again")
    return "x"
"""


def _method(source: str = METHOD) -> Bound:
    node = ast.parse(source).body[0]
    func = SimpleNamespace(node=node, path="vllm/platforms/xpu.py")
    return Bound(func, None)  # type: ignore[arg-type]


def test_a_request_is_the_trees_enum_member():
    interp = Interpreter(SourceTree(DEMO_TREE))
    assert requested_member(interp, None) is None
    assert requested_member(interp, "") is None
    assert requested_member(interp, "FLASH_ATTN").name == "FLASH_ATTN"
    with pytest.raises(Unknown, match="^NOT_A_BACKEND is no AttentionBackendEnum member"):
        requested_member(interp, "NOT_A_BACKEND")


def test_the_first_log_line_naming_the_backend_used_is_quoted_with_the_request():
    said = _log_line(_method(), "TRITON_ATTN", "FLASH_ATTN")
    assert said == (
        "Cannot use AttentionBackendEnum.FLASH_ATTN (%s): TRITON_ATTN on this platform",
        5,
    )
    assert _log_line(_method(), "FLEX_ATTENTION", "FLASH_ATTN") is None
    assert _log_line(SimpleNamespace(), "TRITON_ATTN", "FLASH_ATTN") is None  # not a method


def test_an_ignored_request_is_noted_with_the_platforms_words():
    decision = Decision("TRITON_ATTN", ["TRITON_ATTN"])
    note_request(decision, "FLASH_ATTN", _method())
    assert decision.ignored_request == (
        "FLASH_ATTN asked for: ignored on this platform, TRITON_ATTN used "
        "(vllm/platforms/xpu.py:5: Cannot use AttentionBackendEnum.FLASH_ATTN (%s): "
        "TRITON_ATTN on this platform)"
    )
    honoured = Decision("FLASH_ATTN", ["FLASH_ATTN"])
    note_request(honoured, "FLASH_ATTN", _method())
    assert honoured.ignored_request == ""
