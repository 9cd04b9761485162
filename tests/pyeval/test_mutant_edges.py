"""Edges a sampled mutation run found unpinned in the evaluator, each test failing
with the mutant it was written for.

Mutants argued equivalent (no input tells them from the product):
- calls.call ``func.func.kind == "classmethod"`` -> ``is``: every kind is a literal
  of the package's own code, and CPython interns such identifier-like literals.
- ops.equal ``left.cls is right.cls`` -> ``==``: PyClass is ``eq=False`` (equality
  is identity).
- checks.run_checks ``found[0] is not body`` -> any other test of ``found[0]``:
  ``memo.units`` holds the body list itself, so while the entry lives no other
  list can have its id, and ``found[0]`` is always ``body``.
- abstract._by_residue ``value.mod or 1`` -> ``or 2``: a head size's ``mod`` is set
  only by ``% c`` with ``c >= 1`` (0 raises ZeroDivisionError), so never falls back.
- lazyclass._whole ``classes[0]`` -> ``classes[-1]``: it is taken only when
  ``len(classes) == 1``.
- machine ``rsplit("/", 1)[-1]`` -> ``rsplit("/", 2)[-1]``: the last piece is
  the same for any split count of at least one.
"""

from __future__ import annotations

import ast

import pytest

from sphinxext_attn.pyeval import Interpreter, Unknown
from sphinxext_attn.pyeval.values import NODE, External
from sphinxext_attn.source.tree import SourceTree


def test_setting_an_attribute_of_an_outside_object_is_unknown_where_it_is(tmp_path):
    it = Interpreter(SourceTree(tmp_path))
    with pytest.raises(Unknown) as raised:
        it.setattr(External("torch.ops"), "x", 1, NODE, "m.py")
    assert raised.value.where == "m.py"  # a node without a line: the file alone
    stmt = ast.parse("\n\nx.y = 1").body[0]
    with pytest.raises(Unknown) as raised:
        it.setattr(External("torch.ops"), "y", 1, stmt, "m.py")
    assert raised.value.where == "m.py:3" and "setting y" in str(raised.value)


def test_values_that_memo_keys_hold_cannot_change():
    """A bound method, an outside name, an enum member, a builtin and a super() proxy
    are kept in memo keys and shared between answers: they are frozen."""
    import dataclasses

    from sphinxext_attn.pyeval import values

    for kind in (values.Bound, values.External, values.EnumMember, values.Builtin):
        made = kind(*[None] * len(dataclasses.fields(kind)))
        first = dataclasses.fields(kind)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(made, first, 1)
    proxy = values.SuperProxy(*[None] * len(dataclasses.fields(values.SuperProxy)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        proxy.__setattr__(dataclasses.fields(values.SuperProxy)[0].name, 1)


def test_an_except_clause_catches_its_exception_and_its_subclasses_only(tmp_path):
    from evaluator import our_answer, python_answer

    body = [
        "out = []",
        "for error in (ValueError, KeyError, ZeroDivisionError):",
        "    try:",
        "        raise error()",
        "    except ZeroDivisionError:",
        "        out.append('zero')",
        "    except LookupError:",
        "        out.append('lookup')",
        "    except ValueError:",
        "        out.append('value')",
        "return out",
    ]
    want = python_answer("", "\n".join(body))
    assert want == ("ok", ["value", "lookup", "zero"])
    assert our_answer(tmp_path, "", body) == want


def test_each_statement_costs_one_step(tmp_path):
    """``y = 2`` is a step for the statement and one for its constant."""
    from evaluator import ask, cm, load

    spent = []
    for extra in (0, 5):
        lines = ["x = 1", *["y = 2"] * extra, "return x"]
        it, cls = load(tmp_path / str(extra), cm("f", *lines))
        with it.question(steps=10_000) as q:
            ask(it, cls, "f")
        spent.append(q.steps_spent)
    assert spent[1] - spent[0] == 5 * 2
