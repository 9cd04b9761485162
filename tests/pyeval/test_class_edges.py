"""Class edges the generated class code (test_generated_classes.py) found answered
unlike CPython, each pinned with CPython's answer or the explicit unknown that
replaced a wrong one; and class-keyword and MRO edges a mutant left unpinned."""

from __future__ import annotations

from pathlib import Path

import pytest
from evaluator import our_answer

DC = "from dataclasses import dataclass\nfrom typing import NamedTuple\nimport enum\n\n"

FROZEN = DC + "@dataclass(frozen=True)\nclass R:\n    a: int = 1\n\n"

ALIAS = "class E(enum.Enum):\n    A = 1\n    B = 1\n    C = 2\n"
AUTO = "class E(enum.Enum):\n    A = enum.auto()\n    B = enum.auto()\n"

CASES = [
    # a frozen dataclass refuses any name on its own instances
    (
        FROZEN + "    def __init__(self, a=9):\n        self.a = a\n",
        "R().a",
        ("raise", "FrozenInstanceError"),
    ),
    (
        FROZEN + "    def __post_init__(self):\n        self.b = 2\n",
        "R().a",
        ("raise", "FrozenInstanceError"),
    ),
    # ... and a plain subclass's instances its fields only
    (FROZEN + "class S(R):\n    def __init__(self):\n        self.c = 3\n", "S().c", ("ok", 3)),
    (
        FROZEN + "class S(R):\n    def __init__(self):\n        self.a = 3\n",
        "S().a",
        ("raise", "FrozenInstanceError"),
    ),
    # caught as the AttributeError it derives from
    (
        FROZEN
        + "def f():\n    try:\n        R().a = 2\n    except AttributeError:\n        return 5\n",
        "f()",
        ("ok", 5),
    ),
    # a plain subclass of a dataclass is made by the dataclass's __init__
    (
        DC + "@dataclass\nclass R:\n    a: int\n    b: int = 2\n\nclass S(R):\n    d = 4\n",
        "S(1).b",
        ("ok", 2),
    ),
    (
        DC + "@dataclass\nclass R:\n    a: int\n\nclass S(R):\n    d = 4\n",
        "S().d",
        ("raise", "TypeError"),
    ),
    (
        DC + "@dataclass\nclass R:\n    a: int\n\nclass S(R):\n    pass\n",
        "S(1) == S(1)",
        ("ok", True),
    ),
    # a dataclass keeping its own __init__ still compares by fields
    (
        DC + "@dataclass\nclass R:\n    a: int\n    def __init__(self, a):\n        self.a = a\n",
        "R(1) == R(1)",
        ("ok", True),
    ),
    # an enum called with no value
    (DC + "class E(enum.Enum):\n    A = 1\n", "E()", ("raise", "TypeError")),
    (DC + "class E(enum.Enum):\n    A = 1\n", "E(E.A).value", ("ok", 1)),
    (DC + "class E(enum.Enum):\n    A = 1\n", "E(2)", ("raise", "ValueError")),
    # a later name of an earlier member's value is an alias of it, never iterated
    (DC + ALIAS, "E.B is E.A", ("ok", True)),
    (DC + ALIAS, "E.B.name", ("ok", "A")),
    (DC + ALIAS, "E['B'].name", ("ok", "A")),
    (DC + ALIAS, "[m.name for m in E]", ("ok", ["A", "C"])),
    (DC + ALIAS, "E.C is E.A", ("ok", False)),
    (DC + AUTO, "E.B is E.A", ("ok", False)),
    (DC + AUTO, "[m.name for m in E]", ("ok", ["A", "B"])),
    # ABCMeta adds no member: a name no class binds is Python's AttributeError
    (
        "import abc\nclass K(metaclass=abc.ABCMeta):\n    x = 1\n",
        "K.zz",
        ("raise", "AttributeError"),
    ),
    # an exception instance of the tree: its class's attributes, raised as itself
    (DC + "class Err(ValueError):\n    code = 3\n", "Err('m').code", ("ok", 3)),
    (DC + "class Err(ValueError):\n    code = 3\n", "isinstance(Err(), Err)", ("ok", True)),
    # a name neither the class nor its outside base (ValueError, tuple) has
    (DC + "class Err(ValueError):\n    pass\n", "Err().x", ("raise", "AttributeError")),
    (DC + "class P(NamedTuple):\n    a: int = 1\n", "P().nope", ("raise", "AttributeError")),
    (DC + "class P(NamedTuple):\n    a: int = 1\n", "getattr(P(), 'nope', 5)", ("ok", 5)),
]

UNKNOWN = [
    # a __setattr__ of the tree found first is not the frozen one (nor evaluated)
    (
        FROZEN + "class S(R):\n    def __setattr__(self, n, v):\n        pass\n"
        "    def __init__(self):\n        self.a = 3\n",
        "S().a",
        "S.__setattr__ not evaluated",
    ),
    # was External('builtins.Err.x') and TypeError on ``raise e``
    (
        DC + "class Err(ValueError):\n    pass\n",
        "Err('m').args",
        "Err.args may come from builtins.ValueError",
    ),
    (
        DC + "class Err(ValueError):\n    def __init__(self):\n        self.a = 1\n",
        "Err().a",
        "creating a Err exception with its own __init__",
    ),
    # any other metaclass may add it
    (
        "class K(metaclass=type):\n    x = 1\n",
        "K.zz",
        "K has a metaclass that is not evaluated (it may add zz)",
    ),
    # a named tuple's tuple methods are not the class's
    (
        DC + "class P(NamedTuple):\n    a: int = 1\n",
        "P().count(1)",
        "P.count may come from typing.NamedTuple",
    ),
    (
        DC + "class E(enum.Enum):\n    A = 1\n",
        "E(1, 2)",
        "E() with other than one value not evaluated",
    ),
    (
        DC + "class E(enum.Enum):\n    A = 1\n",
        "E(value=1)",
        "E() with other than one value not evaluated",
    ),
    # ``==`` of dataclass instances holding a name that is not a field
    (
        DC
        + "@dataclass\nclass R:\n    a: int\n    def __post_init__(self):\n        self.b = 2\n",
        "R(1) == R(1)",
        "== of R instances holding more than fields",
    ),
    # a class keyword other than ``metaclass`` is not a metaclass: the base's
    # __init_subclass__ is what may add the member
    (
        "class A:\n    def __init_subclass__(cls, **kw):\n        pass\n\n"
        "class D(A, zz=1):\n    pass\n",
        "D.missing",
        "A has an __init_subclass__ that is not evaluated (it may add missing)",
    ),
]


def _reason(answer: tuple[str, object]) -> str:
    assert answer[0] == "unknown", answer
    return str(answer[1]).rsplit(" (", 1)[0]


@pytest.mark.parametrize(("prelude", "expr", "expected"), CASES)
def test_class_edge_answers_as_python(
    tmp_path: Path, prelude: str, expr: str, expected: tuple[str, object]
) -> None:
    assert our_answer(tmp_path, prelude, [f"return {expr}"]) == expected


@pytest.mark.parametrize(("prelude", "expr", "reason"), UNKNOWN)
def test_class_edge_is_unknown(tmp_path: Path, prelude: str, expr: str, reason: str) -> None:
    assert _reason(our_answer(tmp_path, prelude, [f"return {expr}"])) == reason


def test_raising_an_exception_instance_of_the_tree_is_unknown(tmp_path: Path) -> None:
    """``e = Err(); raise e`` raised TypeError (the instance taken for a non-exception)."""
    prelude = "class Err(ValueError):\n    pass\n"
    answer = our_answer(tmp_path, prelude, ["e = Err('m')", "raise e"])
    assert _reason(answer) == "raise of an unknown exception"


ENUM_NAMES = [
    *("_", "__", "___", "_____", "_a", "__a_", "_a__", "__a__", "a_", "_310P", "__p", "a"),
    *("_E__p", "_E_p", "E__p", "_Ex__p", "__a", "_E__p__", "__a___", "___a__", "____a"),
    *("_E__", "_E___", "__E__p"),
]


@pytest.mark.parametrize("cls", ["E", "_E", "__"])
def test_enum_member_names_are_pythons(cls: str) -> None:
    """Written in a class body (so the compiler mangles ``__p``), each name is a member
    exactly when Python's enum makes it one (``_a_`` and the like, which it refuses,
    are left out)."""
    import textwrap

    from sphinxext_attn.pyeval.members import is_enum_member_name

    for name in ENUM_NAMES:
        source = f"import enum\nclass {cls}(enum.Enum):\n    {name} = 1\n"
        namespace: dict[str, object] = {}
        try:
            exec(compile(textwrap.dedent(source), "<enum>", "exec", dont_inherit=True), namespace)
        except ValueError:
            continue  # a reserved _sunder_ name
        members = namespace[cls].__members__  # type: ignore[attr-defined]
        assert is_enum_member_name(name, cls) == (len(members) == 1), (cls, name)
    assert not is_enum_member_name("_a_", "E")  # reserved, never a member
