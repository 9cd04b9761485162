"""A class's own special methods, answered as CPython answers them: what a rich
comparison returns (the method's own value, not its truth), which class's method
a dataclass uses, CPython's checks on ``__bool__`` and ``__len__`` results, and
the builtins' arity. Each case runs the same source under CPython first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from evaluator import call_in, tiny_package

from sphinxext_attn.pyeval import Raised, Unknown
from sphinxext_attn.pyeval.abstract import AbstractInt, Explorer
from sphinxext_attn.pyeval.builtins import _ARITY

SOURCE = """\
from dataclasses import dataclass


class Base:
    def __lt__(self, other):
        return "base lt"

    def __ne__(self, other):
        return "base ne"

    def __eq__(self, other):
        return "base eq"


@dataclass
class D(Base):
    a: int


class Odd:
    def __init__(self, length):
        self.length = length

    def __len__(self):
        return self.length

    def __gt__(self, other):
        return ""


class Yes:
    def __bool__(self):
        return 1


def lt():
    return D(1) < D(2)


def gt():
    return D(2) > D(1)  # reflected: D(1).__lt__(D(2))


def ne():
    return D(1) != D(1)


def eq():
    return D(1) == D(1)  # the dataclass's own __eq__ is nearer than Base's


def chain_false():
    return 1 < 2 < Odd(0) < 5  # reflected: Odd(0).__gt__(2)


def chain_true():
    return D(1) < D(2) < D(3)


def empty():
    return not Odd(0), not Odd(3)


def negative():
    return not Odd(-1)


def not_a_length():
    return not Odd("3")


def bool_int():
    return not Yes()


def len_object():
    return not Odd(Yes())
"""

NAMES = [
    "lt",
    "gt",
    "ne",
    "eq",
    "chain_false",
    "chain_true",
    "empty",
    "negative",
    "not_a_length",
    "bool_int",
    "len_object",
]


def _python(name: str) -> tuple[str, Any]:
    return _run_python(f"{SOURCE}\n\ncall = {name}\n")


@pytest.mark.parametrize("name", NAMES)
def test_special_methods_answer_as_in_python(tmp_path: Path, name: str) -> None:
    """``Base.__lt__`` answers for a dataclass (``name == "__eq__"`` -> ``>=`` skipped
    every inherited comparison), a comparison gives the method's value (``D(1) <
    D(2)`` is ``"base lt"``, not True), a chain stops at its first false answer,
    and ``__bool__``/``__len__`` results CPython rejects raise."""
    interp = tiny_package(tmp_path, {"vllm/code.py": SOURCE})
    try:
        ours: tuple[str, Any] = ("value", call_in(interp, "vllm.code", name))
    except Raised as exc:
        ours = ("raises", f"{exc.kind}: {exc.message}")
    python = _python(name)
    assert ours == python
    assert type(ours[1]) is type(python[1])


def test_the_python_answers_are_the_ones_this_file_is_about() -> None:
    """The cases tell the mistakes apart only if CPython answers as written here."""
    assert [_python(name) for name in NAMES] == [
        ("value", "base lt"),
        ("value", "base lt"),
        ("value", "base ne"),
        ("value", True),
        ("value", ""),
        ("value", "base lt"),
        ("value", (True, False)),
        ("raises", "ValueError: __len__() should return >= 0"),
        ("raises", "TypeError: 'str' object cannot be interpreted as an integer"),
        ("raises", "TypeError: __bool__ should return bool, returned int"),
        ("raises", "TypeError: 'Yes' object cannot be interpreted as an integer"),
    ]


ARGUMENTS = ["C", "'x'", "[1]", "4"]
#: CPython's arity of each builtin the evaluator checks (the test's own list: the
#: product's table is what is under test).
ARITY = {
    "len": 1, "abs": 1, "callable": 1, "reversed": 1, "any": 1, "all": 1, "isinstance": 2,
    "issubclass": 2, "hasattr": 2, "getattr": 3, "range": 3, "enumerate": 2, "sum": 2,
    "sorted": 1,
}  # fmt: skip


#: The ones of them CPython lets take a keyword (``start=``, ``key=``, ``reverse=``).
KEYWORDS = {"enumerate", "sum", "sorted"}


def test_every_checked_builtin_has_an_arity_case() -> None:
    assert sorted(_ARITY) == sorted(ARITY) and set(ARITY) >= KEYWORDS


@pytest.mark.parametrize("builtin", sorted(ARITY))
def test_a_keyword_is_refused_where_cpython_refuses_it(tmp_path: Path, builtin: str) -> None:
    """``issubclass(C, C, x=1)`` is CPython's TypeError (a keyword flag turned on
    passed the keyword on); ``sorted(..., key=...)`` and the like are no arity error."""
    call = f"{builtin}({', '.join(ARGUMENTS[: ARITY[builtin]])}, x=1)"
    source = f"class C:\n    x = 1\n\n\ndef call():\n    return {call}\n"
    kind, message = _run_python(source)
    assert kind == "raises" and message.startswith("TypeError: ")
    interp = tiny_package(tmp_path, {"vllm/code.py": source})
    try:
        call_in(interp, "vllm.code", "call")
    except Raised as exc:
        refused = exc.message == f"{builtin}() takes no keyword arguments"
        assert refused is (builtin not in KEYWORDS), exc.message
    except Unknown:
        assert builtin in KEYWORDS  # not evaluated is no answer; the arity check passed
    else:
        raise AssertionError(f"{call} answered; CPython raises")


def _arity_source(builtin: str, count: int) -> str:
    call = f"{builtin}({', '.join(ARGUMENTS[:count])})"
    return f"class C:\n    x = 1\n\n\ndef call():\n    return {call}\n"


@pytest.mark.parametrize("builtin", sorted(ARITY))
def test_a_builtin_called_with_one_argument_too_many_raises(tmp_path: Path, builtin: str) -> None:
    """One positional argument over a builtin's arity is CPython's TypeError, and a
    call at the arity is no arity error (``hasattr``'s 2 -> 3 answered
    ``hasattr(C, 'x', [1])``; a number one lower refuses a call CPython takes)."""
    most = ARITY[builtin]
    over = _arity_source(builtin, most + 1)
    kind, message = _run_python(over)
    assert kind == "raises" and message.startswith("TypeError: ")
    interp = tiny_package(tmp_path / "over", {"vllm/code.py": over})
    with pytest.raises(Raised) as raised:
        call_in(interp, "vllm.code", "call")
    assert (raised.value.kind, raised.value.message) == (
        "TypeError",
        f"{builtin}() takes at most {most} positional arguments",
    )
    interp = tiny_package(tmp_path / "at", {"vllm/code.py": _arity_source(builtin, most)})
    try:
        call_in(interp, "vllm.code", "call")
    except Raised as exc:
        assert "takes at most" not in exc.message
    except Unknown:
        pass  # not evaluated is no answer either way; the arity check passed


def _run_python(source: str) -> tuple[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(source, "<arity>", "exec", dont_inherit=True), namespace)
    try:
        return "value", namespace["call"]()
    except Exception as exc:
        return "raises", f"{type(exc).__name__}: {exc}"


def test_a_bool_method_returning_a_head_size_raises(tmp_path: Path) -> None:
    """A head size is an int whatever its value: from ``__bool__`` it is CPython's
    TypeError, not a question about its value."""
    source = (
        "class Flag:\n    def __init__(self, n):\n        self.n = n\n\n"
        "    def __bool__(self):\n        return self.n\n\n\n"
        "def flag(n):\n    return not Flag(n)\n"
    )
    interp = tiny_package(tmp_path, {"vllm/code.py": source})
    with pytest.raises(Raised) as raised:
        call_in(interp, "vllm.code", "flag", AbstractInt(Explorer([])))
    assert (raised.value.kind, raised.value.message) == (
        "TypeError",
        "__bool__ should return bool, returned int",
    )
