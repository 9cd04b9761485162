"""Evaluator edges a sampled mutation run (seed 61) found unpinned, each test
failing with the mutant it was written for.

Mutant argued equivalent (no input tells it from the product):
- values.EnumMember.__eq__ ``self.cls is not other.cls`` -> ``self.cls != other.cls``:
  ``cls`` is a ``PyClass``, a dataclass with ``eq=False`` that no class derives from,
  so ``!=`` is object identity's.

Mutant whose code a rewrite removed: dunders._own_truth ``getattr(node, "lineno", 0)``
-> ``-1`` (the line a ``__len__``'s abstract answer is charged to from outside the
tree). Every such expression is now ``values.line_of(node)``; the same mutant of its
default is killed by the evaluator's tests.
"""

from __future__ import annotations

import pytest
from evaluator import call_in, tiny_package

from sphinxext_attn.pyeval import Unknown
from sphinxext_attn.pyeval.lazyclass import LazyBody
from sphinxext_attn.pyeval.values import NODE

ONE_LINE = "class C:\n    {}\n\n\ndef f():\n    return C.items\n"
#: methods enough to make the class read member by member (``lazyclass.LAZY_CHARS``)
PADDING = "".join(f"    def f{i}(self):\n        return {i}\n\n" for i in range(200))


@pytest.mark.parametrize("how", ["small", "member-by-member", "whole-body"])
def test_a_change_after_a_semicolon_is_a_change_of_the_class_body(tmp_path, how):
    """``items = [1]; items.append(2)`` makes ``C.items`` ``[1, 2]`` in CPython; the
    evaluator does not run class-body changes, so it says so, as it does when the
    change is on the next line. It read only the statements on later lines, and
    answered ``[1]`` (``s.lineno > stmt.lineno`` -> ``>=`` took the binding's own
    line, which is how a sampled mutant showed the gap)."""
    source = ONE_LINE.format("items = [1]; items.append(2)")
    if how != "small":
        source = source.replace("\n\n\ndef f", "\n\n" + PADDING + "\ndef f")
    it = tiny_package(tmp_path, {"vllm/m.py": source})
    body = it.module("vllm.m").lookup("C", it, NODE).node.body
    assert isinstance(body, LazyBody) == (how != "small")
    if how == "whole-body":
        assert len(body) == 202  # parsed whole, as a reader that lists it leaves it
    with pytest.raises(Unknown, match=r"C\.items is changed in the class body") as caught:
        call_in(it, "vllm.m", "f")
    assert caught.value.line == 2


@pytest.mark.parametrize(
    "body", ["x = 0; items = [1]", "items = [1]; x = items.count(1)", "items = [1]; y = []"]
)
def test_a_statement_before_the_binding_or_not_changing_it_is_no_change(tmp_path, body):
    it = tiny_package(tmp_path, {"vllm/m.py": ONE_LINE.format(body)})
    assert call_in(it, "vllm.m", "f") == [1]


@pytest.mark.parametrize("op", ["Eq", "NotEq", "Lt", "LtE", "Gt", "GtE"])
def test_a_remainder_compared_with_each_order_keeps_the_sizes_python_keeps(op):
    """``head_size % 8 OP c`` for every ``c`` from -1 to 8, and the floats 2.5 and 3.0,
    as a set of sizes, against CPython's operator (``<=`` -> ``is`` kept only the
    remainder equal to ``c``; ``!=`` -> ``is not`` took 3 for other than 3.0)."""
    import ast
    import operator

    from sphinxext_attn.pyeval.abstract import binop, compare, explore

    python = {"Eq": operator.eq, "NotEq": operator.ne, "Lt": operator.lt}
    python |= {"LtE": operator.le, "Gt": operator.gt, "GtE": operator.ge}
    for bound in [*range(-1, 9), 2.5, 3.0]:

        def predicate(x, bound=bound):
            remainder = binop(ast.Mod(), x, 8, ("", 0))
            return compare(getattr(ast, op)(), remainder, bound, ("", 0))

        found = explore(predicate, ("", 0))
        want = {h for h in range(1, 257) if python[op](h % 8, bound)}
        assert {h for h in range(1, 257) if h in found} == want, bound
