"""What the evaluator charges its step budget for a value it builds or walks, exactly:
a charge that drifted (a smaller constant, a lost operand) would let a hostile body
build more than the budget says before it is stopped."""

from __future__ import annotations

import ast

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter, ops
from sphinxext_attn.pyeval.values import NODE, Budget
from sphinxext_attn.source.tree import SourceTree

WHERE = ("x.py", 1)


def test_a_new_value_is_charged_by_its_size():
    assert ops.footprint("abc") == 3 and ops.footprint(b"ab") == 2
    assert ops.footprint([1, 2, 3]) == 24 and ops.footprint((1,)) == 8
    assert ops.footprint({1, 2}) == 64 and ops.footprint({"a": 1}) == 32
    assert ops.footprint(frozenset()) == 0


def test_a_union_and_a_concatenation_are_charged_for_both_operands():
    budget = Budget(steps=1000)
    union = ops.binop(ast.BitOr(), set(range(100)), set(range(100, 116)), WHERE, budget)
    assert len(union) == 116 and budget.steps == 1000 - (3200 + 512) // ops.STEP_BYTES
    budget = Budget(steps=1000)
    joined = ops.binop(ast.Add(), list(range(100)), list(range(100, 200)), WHERE, budget)
    assert len(joined) == 200 and budget.steps == 1000 - 1600 // ops.STEP_BYTES


def test_a_walk_is_charged_a_step_and_its_items():
    budget = Budget(steps=1000)
    ops.weigh(tuple(range(640)), budget, WHERE)
    assert budget.steps == 1000 - (1 + 640 * 8 // ops.STEP_BYTES)


def test_a_set_display_is_charged_its_walk_and_its_table(tmp_path):
    interp = Interpreter(SourceTree(tmp_path), Machine())
    interp.budget = Budget(steps=1000)
    made = interp.make_set(list(range(100)), NODE, "x.py")
    walk = 1 + 800 // ops.STEP_BYTES
    assert len(made) == 100 and interp.budget.steps == 1000 - walk - 3200 // ops.STEP_BYTES
