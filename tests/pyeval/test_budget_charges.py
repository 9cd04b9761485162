"""What the evaluator charges its step budget for a value it builds or walks, exactly:
a charge that drifted (a smaller constant, a lost operand) would let a hostile body
build more than the budget says before it is stopped."""

from __future__ import annotations

import ast

import pytest

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter, formatting, ops
from sphinxext_attn.pyeval.values import NODE, Budget, LimitExceeded
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


def test_a_join_is_refused_only_past_the_size_limit():
    most = ops.MAX_ITEMS
    formatting.join_size("", ["x" * (most - 1), "y"], WHERE)
    formatting.join_size(",", ["x" * (most - 2), "y"], WHERE)  # one separator: exactly the limit
    formatting.join_size(",", ["x" * most], WHERE)  # one item: no separator
    formatting.join_size("-" * (most + 1), [], WHERE)  # nothing joined: no separator either
    formatting.join_size("", ["x" * most, 5], WHERE)  # not a str: TypeError later, no size
    formatting.join_size(b"-" * (most + 1), [b"a", b"b"], WHERE)  # bytes are not sized here
    for sep, items in (
        (",", ["x" * (most - 1), "y"]),
        ("", ["x" * most, "y"]),
        ("ab", ["", ""] * (most // 4 + 1)),
    ):
        try:
            formatting.join_size(sep, items, WHERE)
        except ops.LimitExceeded as exc:
            assert exc.kind == "size"
        else:
            raise AssertionError(f"{sep!r}.join of {len(items)} items not refused")


def test_a_replace_is_refused_only_past_the_size_limit(tmp_path):
    """The result's length is the text's plus what the replacements add (an empty
    ``old`` matches between every character and at both ends)."""
    import pytest
    from evaluator import ask, cm, load

    from sphinxext_attn.pyeval import LimitExceeded

    half = ops.MAX_ITEMS // 2
    body = (
        cm("at", f"return len('a'.replace('', 'x' * {half - 1}))")
        + cm("past", f"return len('a'.replace('', 'x' * {half}))")
        + cm("two", f"return len('ab'.replace('b', 'x' * {ops.MAX_ITEMS - 1}))")
        + cm("once", f"return len('aa'.replace('a', 'x' * {half}, 1))")
        + cm("never", f"return len('a'.replace('', 'x' * {half}, 0))")
        + cm("shrink", f"return len(('ab' * {half}).replace('b', ''))")
    )
    it, cls = load(tmp_path, body)
    assert ask(it, cls, "at") == 2 * (half - 1) + 1
    with pytest.raises(LimitExceeded):
        ask(it, cls, "past")
    assert ask(it, cls, "two") == ops.MAX_ITEMS
    assert ask(it, cls, "once") == half + 1
    assert ask(it, cls, "never") == 1
    assert ask(it, cls, "shrink") == half


def test_a_charge_is_a_step_from_step_bytes_on():
    budget = Budget(steps=5)
    ops.charge(budget, ops.STEP_BYTES - 1, WHERE)
    assert budget.steps == 5
    ops.charge(budget, ops.STEP_BYTES, WHERE)
    assert budget.steps == 4
    ops.charge(budget, -ops.STEP_BYTES, WHERE)  # ``'x' * -3``: nothing is built
    assert budget.steps == 4


def test_a_walk_descends_max_nesting_levels_and_may_spend_every_step():
    t: tuple[object, ...] = ()
    for _ in range(ops.MAX_NESTING):
        t = (t,)
    budget = Budget(steps=ops.MAX_NESTING + 1)  # a step for each of its tuples
    ops.weigh(t, budget, WHERE)
    assert budget.steps == 0
    with pytest.raises(LimitExceeded, match="value nested too deeply"):
        ops.weigh((t,), Budget(), WHERE)
    budget = Budget(steps=ops.MAX_NESTING)
    with pytest.raises(LimitExceeded, match="step budget exhausted"):
        ops.weigh(t, budget, WHERE)
    assert budget.steps == -1


def test_a_text_for_a_message_is_cut_at_1000_characters():
    assert ops.text("x" * 2000, Budget(), WHERE) == "x" * 1000
    assert ops.text([1, 2], Budget(), WHERE) == "[1, 2]"


def test_enumerate_and_zip_are_charged_64_bytes_a_pair(tmp_path):
    """79 pairs: 5056 bytes, 9 steps (65 bytes a pair would be 10)."""
    from sphinxext_attn.pyeval.builtins import BUILTINS

    interp = Interpreter(SourceTree(tmp_path), Machine())
    items, longer = list(range(79)), list(range(200))
    for name, args in (("enumerate", [items]), ("zip", [items, longer]), ("zip", [longer, items])):
        interp.budget = Budget(steps=100)
        for arg in args:
            interp.iterate(arg, NODE, "x.py")
        walked = 100 - interp.budget.steps  # what reading the arguments costs
        interp.budget = Budget(steps=100)
        assert len(BUILTINS[name].fn(interp, args, {}, NODE, "x.py")) == 79
        assert 100 - interp.budget.steps - walked == 64 * 79 // ops.STEP_BYTES == 9


def test_sum_is_charged_as_its_loop_and_sorting_a_step_an_item(tmp_path):
    """``sum`` of 10 ints: 3 steps an item (a loop of ``total + item``); ``sorted``,
    ``min`` and ``max`` of 10: a step an item and the walk of the list (1 step)."""
    from sphinxext_attn.pyeval.builtins import BUILTINS

    interp = Interpreter(SourceTree(tmp_path), Machine())
    items = list(range(10))
    interp.budget = Budget(steps=100)
    interp.iterate(items, NODE, "x.py")
    walked = 100 - interp.budget.steps  # what reading the argument costs
    for name, want in (("sum", 30), ("sorted", 11), ("min", 11), ("max", 11)):
        interp.budget = Budget(steps=100)
        BUILTINS[name].fn(interp, [items], {}, NODE, "x.py")
        assert (name, 100 - interp.budget.steps - walked) == (name, want)


def test_a_head_size_tested_for_membership_is_charged_a_step_an_item():
    from sphinxext_attn.pyeval.abstract import AbstractInt, Explorer

    budget = Budget(steps=100)
    assert ops.contains((64, 128, 256), AbstractInt(Explorer([])), WHERE, budget) is True
    assert budget.steps == 100 - (1 + 3)
