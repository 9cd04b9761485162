"""The selector config a decision is asked with (selection/decision.py), where the
release's ``AttentionSelectorConfig`` cannot be built: no such class, or a name
that is not a class. Each is the decision's reason for not being evaluated, never
a crash or a guess."""

from __future__ import annotations

import pytest
from treebuilder import DEMO_TREE, edited_demo_tree, replace_once

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.selection import Config
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.source.tree import SourceTree

SELECTOR = "vllm/v1/attention/selector.py"
CLASS_LINE = "class AttentionSelectorConfig(NamedTuple):"


@pytest.mark.parametrize(
    ("replacement", "reason"),
    [
        (
            "class OtherConfig(NamedTuple):",
            "no AttentionSelectorConfig in vllm.v1.attention.selector or vllm.attention.selector",
        ),
        (
            "AttentionSelectorConfig = 3\n\n\nclass OtherConfig(NamedTuple):",
            "AttentionSelectorConfig is not a class",
        ),
    ],
    ids=["missing", "not-a-class"],
)
def test_a_selector_config_that_cannot_be_built_is_the_reason(tmp_path, replacement, reason):
    root = edited_demo_tree(tmp_path, SELECTOR, replace_once(CLASS_LINE, replacement))
    decision = Selector(Interpreter(SourceTree(root), Machine())).decide(Config(head_size=128))
    assert decision.selected is None and decision.priorities == []
    assert decision.error.startswith(f"not evaluated: {reason}"), decision.error
    assert decision.unknown["*"].startswith(reason)


def test_the_demo_builds_its_selector_config():
    """The same question on the demo tree as it is: a pick (the cases above differ
    from it only in the class)."""
    decision = Selector(Interpreter(SourceTree(DEMO_TREE), Machine())).decide(
        Config(head_size=128)
    )
    assert decision.selected and not decision.error
