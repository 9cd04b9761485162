"""Dataclass fields declared with ``dataclasses.field(...)``, ``kw_only`` and the
``KW_ONLY`` sentinel, and ``==`` of dataclass instances inside containers, each
compared with CPython: the evaluator answers as CPython does, or is unknown for
the reason given (a class statement it does not model, never a guess)."""

from __future__ import annotations

from pathlib import Path

import pytest
from evaluator import our_answer, python_answer

DC = "from dataclasses import dataclass, field, KW_ONLY\nimport dataclasses\n\n"

FIELDS = (
    DC + "@dataclass\nclass R:\n    a: int\n"
    "    b: int = field(default=0, compare=False)\n"
    "    c: list = field(default_factory=list)\n"
    "    d: int = field(default=5, kw_only=True)\n"
)
KW_CLASS = DC + "@dataclass(kw_only=True)\nclass R:\n    a: int\n    b: int = 2\n"
SENTINEL = DC + "@dataclass\nclass R:\n    a: int\n    _: KW_ONLY\n    b: int = 2\n"
INHERITED = (
    DC + "@dataclass\nclass B:\n    a: int\n    m: dict = field(default_factory=dict)\n"
    "    k: int = field(default=1, kw_only=True, compare=False)\n\n"
    "@dataclass\nclass R(B):\n    c: int = dataclasses.field(default=3)\n"
)
NOT_INIT = (
    DC + "@dataclass\nclass R:\n    a: int\n    n: int = field(default=7, init=False)\n"
    "    u: int = field(init=False)\n"
)
MAKE = "def make():\n    return [1]\n\n"
FACTORY = DC + MAKE + "@dataclass\nclass R:\n    a: list = field(default_factory=make)\n"
POST_INIT = (
    DC + "@dataclass\nclass R:\n    a: int\n    def __post_init__(self):\n        self.b = 2\n"
)
FROZEN = DC + "@dataclass(frozen=True)\nclass R:\n    a: int\n"
OWN_EQ = DC + "class B:\n    def __eq__(self, o):\n        return True\n\n"
OWN_EQ_REASON = "== of R instances by their __eq__ not evaluated"
PLAIN_BASE = DC + "class P:\n    x: int = 4\n\n@dataclass\nclass R(P):\n    a: int = 1\n"

ANSWERED = [
    (FIELDS, "R(1).b"),
    (FIELDS, "R(1).c"),
    (FIELDS, "R(1).d"),
    (FIELDS, "R(1, 2, [3], 4)"),
    (FIELDS, "R(1, d=6).c"),
    (FIELDS, "R(1, a=2)"),
    (FIELDS, "R(1).c is R(1).c"),
    (FIELDS, "R(1, 2) == R(1, 3)"),
    (FIELDS, "R(1, 2) != R(1, 3)"),
    (FIELDS, "R(1, 2) in [R(1, 3)]"),
    (FIELDS, "[R(1, 2)] == [R(1, 3)]"),
    (FIELDS, "(R(1, 2), 1) == (R(1, 3), 1)"),
    (FIELDS, "[R(1, 2, [4])] == [R(1, 3)]"),
    (FIELDS, "R(1, d=6) == R(1)"),
    (KW_CLASS, "R(1)"),
    (KW_CLASS, "R(1, b=3)"),
    (SENTINEL, "R(1, 3)"),
    (SENTINEL, "R(1, b=4).b"),
    (SENTINEL, "R(1)._"),
    (INHERITED, "R(1, {}, 4).c"),
    (INHERITED, "R(1, {}, 4, 5)"),
    (INHERITED, "R(1).m"),
    (INHERITED, "R(1, k=9) == R(1)"),
    (INHERITED, "R(1).m is R(1).m"),
    (NOT_INIT, "R(1).n"),
    (NOT_INIT, "R(1, 2)"),
    (NOT_INIT, "R(1, n=2)"),
    (FACTORY, "R().a"),
    (FACTORY, "R().a is R().a"),
    (POST_INIT, "R(1) == 3"),
    # a default is made once, when the class is: every instance shares it
    (DC + "@dataclass\nclass R:\n    b: tuple = (1, 2)\n", "R().b is R().b"),
    (DC + "@dataclass\nclass R:\n    b: tuple = field(default=(1, 2))\n", "R().b is R().b"),
    # a dataclass's generated __eq__ is nearer than a base's own
    (OWN_EQ + "@dataclass\nclass R(B):\n    b: int = 0\n", "R(1) == R(2)"),
    (PLAIN_BASE, "R(2).a"),
    (PLAIN_BASE, "R(2, 3)"),
]


@pytest.mark.parametrize(("prelude", "expr"), ANSWERED)
def test_fields_answer_as_python(tmp_path: Path, prelude: str, expr: str) -> None:
    python = python_answer(prelude, f"return {expr}")
    ours = our_answer(tmp_path, prelude, [f"return {expr}"])
    assert ours[0] == python[0], (ours, python)
    if ours[0] == "ok":
        assert repr(ours[1]) == repr(python[1]) or ours[1] == python[1], (ours, python)
    else:
        assert ours[1] == python[1], (ours, python)


UNKNOWN = [
    # ``==`` of an instance holding a name that is not a field: inside containers as
    # at the top (test_class_edges)
    (POST_INIT, "R(1) in [R(1)]", "== of R instances holding more than fields"),
    (POST_INIT, "(R(1),) == (R(1),)", "== of R instances holding more than fields"),
    (POST_INIT, "[R(1)] == [R(1)]", "== of R instances holding more than fields"),
    # a compared field the instance lacks (AttributeError on 3.11 and 3.12)
    (NOT_INIT, "R(1) == R(1)", "== of R instances without field 'u'"),
    (
        DC + "f = 1\n@dataclass\nclass R:\n    a: int = field(default=0, compare=f)\n",
        "R()",
        "dataclasses.field(compare=...) not a constant",
    ),
    (
        DC + "@dataclass\nclass R:\n    a: int = field(default=0, other=1)\n",
        "R()",
        "dataclasses.field(other...) not evaluated",
    ),
    (
        DC + "@dataclass\nclass R:\n    a: int = field(default=0, default_factory=list)\n",
        "R()",
        "class R raises ValueError when made",
    ),
    (
        DC + "@dataclass\nclass R:\n    a: list = field(default=[])\n",
        "R()",
        "R.a: a mutable default (ValueError)",
    ),
    (
        DC + "@dataclass\nclass R:\n    a: int = 1\n\n@dataclass\nclass S(R):\n    b: int\n",
        "S(1, 2)",
        "class S raises TypeError when made (field 'b')",
    ),
    (
        DC + "k = True\n@dataclass(kw_only=k)\nclass R:\n    a: int\n",
        "R(1)",
        "@dataclass(kw_only=...) not a constant",
    ),
    # an __eq__ of the tree inside containers (called only at the top)
    (
        DC + "@dataclass\nclass R:\n    a: int\n    def __eq__(self, o):\n        return True\n",
        "R(1) in [R(2)]",
        OWN_EQ_REASON,
    ),
    (OWN_EQ + "class R(B):\n    pass\n", "[R()] == [R()]", OWN_EQ_REASON),
    (
        OWN_EQ + "@dataclass(eq=False)\nclass R(B):\n    a: int\n",
        "(R(1),) == (R(2),)",
        OWN_EQ_REASON,
    ),
    # an InitVar is a parameter of __init__ and __post_init__, not a field
    (
        DC + "from dataclasses import InitVar\n@dataclass\nclass R:\n    a: int\n"
        "    s: InitVar[int] = 3\n    def __post_init__(self, s):\n        self.t = s\n",
        "R(1).t",
        "a dataclasses.InitVar field not evaluated",
    ),
    # a dataclass instance in a set or as a dict key: unhashable, or hashed by its
    # fields when frozen (identity answered TypeError's cases and len 2 for 1)
    (POST_INIT, "{R(1)}", "hash of a R instance (a dataclass) not evaluated"),
    (POST_INIT, "{R(1): 2}", "hash of a R instance (a dataclass) not evaluated"),
    (FROZEN, "len({R(1), R(1)})", "hash of a R instance (a dataclass) not evaluated"),
    (FROZEN, "{R(1)} == {R(1)}", "hash of a R instance (a dataclass) not evaluated"),
    (
        DC + "x = float('nan')\n@dataclass\nclass R:\n    a: float\n",
        "[R(x)] == [R(x)]",
        "== of R instances holding one nan",
    ),
]


@pytest.mark.parametrize(("prelude", "expr", "reason"), UNKNOWN)
def test_fields_unknown_with_reason(tmp_path: Path, prelude: str, expr: str, reason: str) -> None:
    ours = our_answer(tmp_path, prelude, [f"return {expr}"])
    assert ours[0] == "unknown", (ours, python_answer(prelude, f"return {expr}"))
    assert str(ours[1]).rsplit(" (", 1)[0] == reason
