"""Mutants of the evaluator's values and operators argued equivalent: no input tells
them from the product (more are listed in test_mutant_edges.py). Each argument names
the code it reads; the test below fails when that code changes, so an argument
never outlives the code it was made for.

- abstract._solve ``value.scale < 0`` -> ``< 1``: a head size's scale is never 0
  (``_made`` returns a plain number for ``x * 0``).
- abstract._made ``(mod or 0) > 4096`` -> ``(mod or 1)``: ``mod`` is None or at
  least 1 (``% 0`` raises ZeroDivisionError first), and ``1 > 4096`` is false too.
- stdlib.call ``args[0] if isinstance(args[0], PyFunction)`` -> ``args[-1]``, and
  ``literal = args[0]`` (``get_args``) -> ``args[-1]``: each is taken only when
  ``len(args) == 1``.
- abstract.member ``container.step > 0`` -> ``>= 0`` and abstract.binop ``c < 0``
  -> ``c < 1``: a range's step is never 0, and ``% 0`` has raised just before.
- abstract.Explorer.decide ``self.forks == len(self.trace)`` -> ``>=``: each fork
  reads the trace or appends to it, so ``forks`` never passes its length.
- exceptions.raised and _derives_from_base_exception ``class_mro(...)[1:]`` ->
  the whole MRO: its first entry is the raised class itself, a PyClass, which
  ``_derives_...`` filters out (External only) and which ``Raised.matches`` already
  tries as the kind before the bases.
- builtins._convert ``enum_text(args[0], -1, ...)`` -> any other number but
  ``ord("r")``/``ord("a")``: objects.enum_text tells only those two conversions
  (``repr``) from the rest (``str``).
- ops.equal ``not isinstance(a, EnumMember) and not isinstance(b, EnumMember) and
  a == b`` without either isinstance test: two members were answered just before,
  so at most one side is a member, of a plain (not str/int) enum, and its
  ``__eq__`` answers False to anything but a member (``a == b`` is False anyway).
- ops.unary ``~int(value)`` -> ``~value``: the same int for an int or a bool (the
  ``int()`` keeps Python 3.12+ from warning that ``~`` of a bool is deprecated).
- intsets._meet ``a.lo == a.hi or b.lo == b.hi`` -> ``and``: the single-size
  case is a shortcut; the general path meets a size (period 1) with a run in a
  period of the run's own (never too long) and gives the same one-size run or None.
- intsets._both without ``b.lo == b.hi``: a single size ``b`` ending where ``a``
  ends starts after ``a``'s first member, so the interval from ``a.lo`` it would
  be written as starts elsewhere than ``b`` and the pair is not combined anyway.
- values.out_of_steps ``exc.kind == "steps"`` -> ``is``: every kind is a string
  literal in the package (``LimitExceeded``'s default or a ``kind=`` argument), and
  CPython interns identifier-like literals, so equal kinds are one object.
- calls.call ``func.kind == "classmethod"`` -> ``<=``: a function's kind is only
  ever "function", "classmethod", "staticmethod", "property" or "opaque"
  (values.PyFunction, stdlib.decorator_kind, Interpreter.make_function), and every
  other one sorts after "classmethod".
- question.Question ``_read: int = 0`` -> ``= 1``: a Question is made only by
  ``QuestionMixin.question``, whose ``finally`` sets ``_read`` before ``closed``,
  and ``read`` returns ``_read`` only once closed, so the default is never read.
- interp.Interpreter ``self.class_writes = 0`` -> any other start: the count is only
  ever raised by one and compared with an earlier reading of itself (calls, the
  runtime's method memo) or keyed beside the function (callmemo), so where it
  starts changes no comparison and no key's equality.
- instances.instantiate ``args[0]`` -> ``args[-1]`` in an enum's value lookup: the
  line above raises unless ``len(args) == 1``.
- lazyclass.class_of_chunk ``found.group(1) == name`` -> ``>=``: a piece is asked
  only for a name it binds, and ``lazy_class`` reads the piece's own header (a class
  statement or None), so the mutant at most reads lazily the same class ``name``
  (when a decorator's string holds a line ``class x`` that sorts after it) which
  the product parses whole: the same class either way.
- calls.call ``interp.class_writes == writes`` -> ``is`` where an answer is kept
  (sample 60): past 256 class writes the two counts are equal ints but not one object,
  so the mutant keeps no answer; the call memo only saves work (a kept answer is
  handed out fresh, and only for a call that wrote no class or shared value), so the
  next call is evaluated again to the same answer.
"""

from __future__ import annotations

import ast
import inspect

import pytest

from sphinxext_attn.pyeval import (
    abstract,
    builtins,
    calls,
    exceptions,
    instances,
    interp,
    intsets,
    lazyclass,
    ops,
    question,
    stdlib,
    values,
)

#: (module, the code an argument above reads)
ARGUED = [
    (abstract, "if value.scale < 0:"),
    (abstract, "(mod or 0) > 4096"),
    (abstract, "container.step > 0"),
    (abstract, "if c < 0:"),
    (abstract, "if self.forks == len(self.trace):"),
    (stdlib, "return args[0] if isinstance(args[0], PyFunction)"),
    (stdlib, 'get_args") and len(args) == 1:\n        literal = args[0]'),
    (exceptions, "class_mro(value, interp)[1:]"),
    (builtins, 'it.enum_text(args[0], -1, "", node, path)'),
    (ops, "return ~int(value)"),
    (ops, "not isinstance(a, EnumMember) and not isinstance(b, EnumMember) and a == b"),
    (intsets, "if a.lo == a.hi or b.lo == b.hi:"),
    (intsets, "if a.hi != b.hi or a.lo == a.hi or b.lo == b.hi:"),
    (values, 'exc.kind == "steps"'),
    (calls, 'if func.kind == "classmethod":'),
    (question, "return self._read if self.closed else"),
    (question, "q._read, q.closed = self.capability_read, True"),
    (question, "q = Question(self, self.capability)"),
    (interp, "self.class_writes = 0"),
    (instances, "if kwargs or len(args) != 1:"),
    (instances, "if ops.equal(member.value, args[0], interp.budget, where):"),
    (lazyclass, "found.group(1) == name and lazy_class(chunk, fallback)"),
    (calls, "if (interp.class_writes == writes or func.cached) and not isinstance(value"),
    (calls, "kept = _fresh(interp, value)"),
    (lazyclass, "if len(module.body) != 1 or not isinstance(module.body[0], ast.ClassDef):"),
]


@pytest.mark.parametrize(("module", "code"), ARGUED, ids=[c for _, c in ARGUED])
def test_the_code_an_argument_reads_is_still_there(module, code):
    assert code in inspect.getsource(module)


def test_a_scale_is_never_zero_and_a_single_size_meets_as_a_run_would():
    """Two of the arguments, checked: ``x * 0`` is a plain number (no abstract value
    with scale 0 exists), and a single size meets a run as the general path would."""
    explorer = abstract.Explorer([])
    assert abstract.binop(ast.Mult(), abstract.AbstractInt(explorer), 0, ("", 0)) == 0
    pattern = intsets.run(3, 90, 6, [3, 4])
    for x in range(1, 100):
        point = intsets.run(x, x)
        general = intsets.run(x, x, pattern.mod, pattern.residues) if x <= 90 else None
        assert intsets._meet(point, pattern) == intsets._meet(pattern, point) == general
