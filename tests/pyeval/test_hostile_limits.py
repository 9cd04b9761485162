"""Each hostile body, each Python error that once escaped as a traceback, and each walk
over a value with shared nesting ends as Unknown or Raised, stopped by the evaluator's
own limits (the step budget only where the reason says so) in bounded memory; every
body runs in a contained child (tests/hostile_bodies.py) so a regression fails
instead of hanging."""

from __future__ import annotations

from typing import Any

import pytest
from containment import CAN_CONTAIN
from hostile_bodies import FILE, HOSTILE, PEAK_BYTES, contained, evaluate, method
from runtime_trees import runtime_backend

pytestmark = pytest.mark.skipif(
    not CAN_CONTAIN,
    reason="the containment harness needs fork() and /proc (Linux)",
)


def check(outcome: tuple[Any, int], reason: str) -> None:
    (kind, detail, where, *left), peak = outcome
    assert kind in ("unknown", "raised"), outcome
    assert reason in detail, outcome
    assert kind == "raised" or where.startswith(FILE), outcome
    # the step budget ran out exactly when that is the reason given
    assert (left[0] < 0) == ("budget" in detail), outcome
    assert peak < PEAK_BYTES, outcome


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_body_is_stopped_by_a_limit_in_bounded_memory(tmp_path, name):
    body, reason = HOSTILE[name]
    runtime_backend(tmp_path, body)
    check(contained(evaluate, tmp_path), reason)


#: Expressions whose Python errors once escaped as tracebacks: (expression, outcome).
ERRORS = [
    ("dict([[[1], 2]])", "TypeError"),
    ("{k: 1 for k in [[1]]}", "TypeError"),
    ("set([[1]])", "unhashable"),
    ("[1, 2][::0]", "ValueError"),
    ("range(0, 10, 0)", "ValueError"),
    ("'x'.split(None, 10**30)", "OverflowError"),
    ("int(float('inf'))", "OverflowError"),
    ("2.0 ** 10000", "OverflowError"),
    ("(-8) ** (1 / 3)", "complex numbers not evaluated"),
    ("MultipleOf(1, 2)", "TypeError"),
    ("len()", "not evaluated"),
    ("isinstance(1)", "not evaluated"),
    ("issubclass(1)", "not evaluated"),
    ("'a'.replace('a')", "not evaluated"),
    ("range()", "not evaluated"),
    ("str(1, 2, 3)", "not evaluated"),
    ("__import__('math').sqrt(-1)", "not evaluated"),
]


@pytest.mark.parametrize(("expr", "outcome"), ERRORS, ids=[e for e, _ in ERRORS])
def test_python_errors_are_raised_or_unknown_never_tracebacks(tmp_path, expr, outcome):
    runtime_backend(tmp_path, method(f"return {expr}"))
    check(contained(evaluate, tmp_path), outcome)


#: Values whose native walk is exponential: two equal, distinct 2**60-leaf trees.
SHARED = {
    "lists": ["x = [1]", "y = [1]", "for i in range(60):", "    x = [x, x]", "    y = [y, y]"],
    "tuples": ["x = (1,)", "y = (1,)", "for i in range(60):", "    x = (x, x)", "    y = (y, y)"],
}
#: Everything that walks a value: hashing, comparing, ordering, printing, memo keys.
WALKS = [
    "{x: 1}", "{x}", "set([x])", "{1: x} == {1: y}", "x == y", "[x] == [y]", "x < y",
    "x in [y]", "[y].count(x)", "[y].index(x)", "{x: 1}.get(y)", "sorted([x, y])",
    "max([x, y])", "str(x)", "f'{x}'", "'%s' % (x,)", "cls.g(x)", "{k: 1 for k in [x]}",
    "cls.h(x)",
]  # fmt: skip
#: ``g`` takes the value and does nothing with it; ``h`` stores it as a dict key.
TAKERS = (
    "@classmethod\ndef g(cls, v):\n    return 1\n"
    "@classmethod\ndef h(cls, v):\n    d = {}\n    d[v] = 1\n    return d\n"
)


@pytest.mark.parametrize("walk", WALKS)
@pytest.mark.parametrize("shape", SHARED)
def test_walking_shared_nesting_is_charged(tmp_path, shape, walk):
    runtime_backend(tmp_path, method(*SHARED[shape], f"return {walk}") + TAKERS)
    (kind, detail, _, left), peak = contained(evaluate, tmp_path)
    # passing it to a call walks nothing (a memo key that would be too big is not made)
    assert (kind, detail) == ("value", "1") if walk == "cls.g(x)" else kind != "value"
    assert kind in ("value", "unknown", "raised"), (kind, detail)
    assert left >= 0 or "budget" in detail, (detail, left)
    assert peak < PEAK_BYTES, (detail, peak)
