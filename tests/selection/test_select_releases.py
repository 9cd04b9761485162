"""Selection on releases whose code is shaped differently from 0.23-0.33 (the
releases with vLLM's cases): rejected backends without their priority before
0.18, FlashAttention's interface not shipped before 0.17, and a pick that
depends on a backend not evaluated."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import vllm_trees
from treebuilder import DEMO_TREE

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.selection import Config, Decision
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.render.select_text import render_text
from sphinxext_attn.selection.answers import with_priorities
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.source.tree import SourceTree


def test_rejected_backends_take_the_places_the_valid_ones_leave():
    """Before 0.18 ``get_valid_backends`` gave each rejected backend its reasons
    only; they were tried in priority order, around the valid ones."""
    old = {"B": ["no"], "D": ["no", "never"]}
    assert with_priorities(old, {0: "A", 2: "C"}) == [
        ("B", (1, ["no"])),
        ("D", (3, ["no", "never"])),
    ]
    new = {"B": (3, ["no"]), "D": (1, ["no"])}
    assert with_priorities(new, {0: "A"}) == [("B", (3, ["no"])), ("D", (1, ["no"]))]


def test_a_pick_behind_a_backend_not_evaluated_says_so():
    """A pick behind a backend not evaluated is conditional, never a definite guess."""
    decision = Decision("C", ["A", "B", "C"], {"B": ["no"]}, {"A": "call into torch"})
    assert decision.undecided() == ["A"]
    decision.make_conditional()
    assert decision.selected is None
    assert [c["backend"] for c in decision.candidates] == ["A", "C"]
    text = render_text(Config(capability="9.0"), decision)
    assert "selected: conditional" in text
    assert "  A if A qualifies (call into torch)" in text
    assert "  C if neither A does" in text
    assert decision.to_json()["candidates"] == decision.candidates
    assert Decision("A", ["A", "B"], {}, {"B": "x"}).undecided() == []
    assert Decision(None, ["A", "B"], {}, {"B": "x"}).undecided() == ["B"]


@pytest.mark.realtree
@pytest.mark.parametrize(
    ("capability", "selected", "fa_rejected"),
    [("9.0", "FLASH_ATTN", False), ("8.0", "FLASHINFER", True)],
)
def test_0_16_decides_with_flash_attention_versions_of_a_full_build(
    capability, selected, fa_rejected
):
    """0.16.0 ships no vllm_flash_attn source: the machine answers which
    FlashAttention versions a full build supports (FA3 on 9.x, so fp8 KV there)."""
    selector = Selector(Interpreter(SourceTree(vllm_trees.tree("0.16.0")), Machine()))
    config = Config(capability=capability, dtype="bf16", kv_cache_dtype="fp8", head_size=128)
    decision = selector.decide(config)
    assert decision.selected == selected
    assert decision.priorities[:2] == ["FLASH_ATTN", "FLASHINFER"]
    assert not decision.unknown
    assert ("FLASH_ATTN" in decision.rejected) is fa_rejected
    assert "FLEX_ATTENTION" in decision.rejected


CUDA = "vllm/platforms/cuda.py"


def _demo(tmp_path: Path, old: str, new: str) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(DEMO_TREE, tree)
    text = (tree / CUDA).read_text(encoding="utf-8")
    assert old in text
    (tree / CUDA).write_text(text.replace(old, new), encoding="utf-8")
    return tree


CONFIGS = [
    Config(capability="9.0", kv_cache_dtype="fp8"),
    Config(capability="10.0", head_size=576, use_mla=True),
    Config(capability="8.0", dtype="fp32", head_size=80),
]


def test_the_older_shape_of_rejections_gives_the_same_decisions(tmp_path):
    tree = _demo(tmp_path, "invalid[backend] = (priority, reasons)", "invalid[backend] = reasons")
    new = Selector(Interpreter(SourceTree(DEMO_TREE), Machine()))
    old = Selector(Interpreter(SourceTree(tree), Machine()))
    for config in CONFIGS:
        assert old.decide(config) == new.decide(config)
    assert any(new.decide(c).rejected for c in CONFIGS)  # rejections were compared


def test_an_answer_of_another_shape_is_not_evaluated_not_a_traceback(tmp_path):
    tree = _demo(tmp_path, "return valid, invalid", "return valid")
    decision = Selector(Interpreter(SourceTree(tree), Machine())).decide(CONFIGS[0])
    assert decision.selected is None
    assert "shape not understood" in decision.error
    assert CUDA in decision.error


def test_each_configuration_is_built_once_and_decides_alike_again():
    """The selector's table asks each point for several backends: the tree's
    selector config and DeviceCapability are built once per configuration."""
    selector = Selector(Interpreter(SourceTree(DEMO_TREE), Machine()))
    first, again = Config(), Config()
    assert selector.build_config(first) is selector.build_config(again)
    assert selector.device_capability(first) is selector.device_capability(again)
    other = Config(head_size=64, capability="10.0")
    assert selector.build_config(other) is not selector.build_config(first)
    assert selector.device_capability(other) is not selector.device_capability(first)
    fresh = Selector(Interpreter(SourceTree(DEMO_TREE), Machine()))
    for config in CONFIGS:
        assert selector.decide(config) == fresh.decide(config) == selector.decide(config)


def test_a_check_not_evaluated_carries_its_unknown_and_the_fact_that_settles_it():
    """get_valid_backends' reasons for a check the evaluator could not run are one
    NotEvaluated reason: a string to the analysed code, the Unknown itself (with the
    assumable fact) to the decision; a plain string with the prefix has no fact."""
    from sphinxext_attn.pyeval import Unknown
    from sphinxext_attn.pyeval.statements import NOT_EVALUATED, NotEvaluated
    from sphinxext_attn.selection.decision import read_valid_backends

    unknown = Unknown("call into torch", "vllm/x.py", 3)
    unknown.assumable = "has_thing"
    reason = NotEvaluated(unknown)
    assert isinstance(reason, str) and reason == f"{NOT_EVALUATED}call into torch (vllm/x.py:3)"

    class Member:  # an enum member: hashable, with a name
        def __init__(self, name: str) -> None:
            self.name = name

    a, b = Member("A"), Member("B")
    invalid = {a: (0, [reason]), b: (1, [f"{NOT_EVALUATED}odd"])}
    decision = read_valid_backends(([], invalid), "vllm/platforms/cuda.py")
    assert decision.unknown == {"A": "call into torch (vllm/x.py:3)", "B": "odd"}
    assert decision.assumable == {"A": "has_thing"}
