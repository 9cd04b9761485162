"""Survivors of a fresh pyeval sample (seed 57), pinned: a head size tested against a
range, a string tested against a container of strings, a math call's size limit and
the walk that charges ``==`` on an instance compared by identity."""

from __future__ import annotations

from sphinxext_attn.pyeval import abstract, abstract_str, ops, stdlib
from sphinxext_attn.pyeval.intsets import IntSet, run
from sphinxext_attn.pyeval.scope import MISSING
from sphinxext_attn.pyeval.values import Budget, Instance, PyClass

WHERE = ("x.py", 1)


def test_a_head_size_in_a_stepped_range_keeps_the_range_residue():
    """``x in range(2, 20, 4)``: the sizes left are 2, 6, 10, 14, 18 (residue
    ``2 % 4``), not the multiples of 4."""
    explorer = abstract.Explorer([True])
    assert abstract.member(abstract.AbstractInt(explorer), range(2, 20, 4), WHERE) is True
    assert explorer.current == IntSet.of([run(2, 18, 4, [2])])
    explorer = abstract.Explorer([False])
    assert abstract.member(abstract.AbstractInt(explorer), range(2, 20, 4), WHERE) is False
    assert 6 not in explorer.current and 4 in explorer.current


def test_a_string_in_a_list_of_strings_is_charged_a_step_and_an_item_each():
    explorer = abstract_str.StrExplorer(["a", "b"], [0, 1])
    budget = Budget(steps=100)
    found = abstract_str.contains(
        ["a", "c", "d"], abstract_str.AbstractStr(explorer), budget, WHERE
    )
    assert found is True and explorer.current == [0] and budget.steps == 100 - 4


def test_a_math_result_is_kept_up_to_4096_bits():
    assert stdlib.call("math.lcm", [2**4095], {}) == 2**4095  # 4096 bits: kept
    assert stdlib.call("math.lcm", [2**4096], {}) is MISSING  # 4097 bits: not kept
    assert stdlib.call("math.gcd", [2**4096, 2**4096], {}) is MISSING


def test_an_instance_compared_by_identity_is_walked_only_to_print_it():
    cls = PyClass("A", None, None, None)  # type: ignore[arg-type]
    plain = Instance(cls, {f"f{i}": [i] for i in range(10)})
    budget = Budget(steps=100)
    ops.weigh(plain, budget, WHERE)  # ``==``, hashing: the instance alone
    assert budget.steps == 100 - 1
    budget = Budget(steps=100)
    ops.weigh(plain, budget, WHERE, text=True)  # printing it: its ten fields too
    assert budget.steps == 100 - 1 - 10 * (1 + 8 // ops.STEP_BYTES)  # it, then each list
