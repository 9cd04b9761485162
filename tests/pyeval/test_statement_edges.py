"""Statements, expressions and calls at the edges of the evaluated subset: what each
answers (Python's value, or the exact unknown reason where the evaluator stops),
and the hooks a caller sets on the interpreter (a call watcher, a GPU observer)."""

# ruff: noqa: E501  (cases read best one per line)

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from evaluator import MODULE, NODE, ask, cm, load, our_answer, python_answer

from sphinxext_attn.pyeval import LimitExceeded, Raised
from sphinxext_attn.pyeval.values import CAPABILITY, PyFunction

PRELUDE = (
    "class CM:\n"
    "    def __enter__(self):\n"
    "        return self\n"
    "    def __exit__(self, *exc):\n"
    "        return False\n"
    "class K:\n"
    "    base = 10\n"
    "    @classmethod\n"
    "    def m(cls, v=1):\n"
    "        return cls.base + v\n"
    "    @classmethod\n"
    "    def sup(cls):\n"
    "        def inner():\n"
    "            return super().m()\n"
    "        return inner()\n"
    "def h(p=1):\n"
    "    return p\n"
    "def top():\n"
    "    return super().m()\n"
    "async def co():\n"
    "    return 1\n"
    "import functools\n"
    "@functools.cache\n"
    "def ch(a, b=[]):\n"
    "    b.append(a)\n"
    "    return len(b)\n"
    "@functools.cache\n"
    "def cl(b):\n"
    "    return len(b)\n"
    "import enum\n"
    "class E(enum.Enum):\n"
    "    A = 1\n"
    "    @classmethod\n"
    "    def m(cls):\n"
    "        return cls is E\n"
)
#: a class whose body calls its own classmethod (Python: TypeError, not callable)
CLASS_BODY_CALL = "class C:\n    @classmethod\n    def m(cls):\n        return 1\n    y = m()\n"

#: (body, Python's answer): the evaluator answers the same
SAME = [
    ("x: int\nreturn 1", ("ok", 1)),
    ("y = 1\ny: int\nreturn y", ("ok", 1)),
    ("y: int = 2\nreturn y", ("ok", 2)),
    ("with CM():\n    x = 1\nreturn x", ("ok", 1)),
    (
        "return (1 if K else 2), (1 if h else 2), not K, not h, bool(K)",
        ("ok", (1, 1, False, False, True)),
    ),
    ("return K().m(2), K.m(), K().m(v=3), E.A.m()", ("ok", (12, 11, 13, True))),
    ("def f(a, *, k):\n    return a + k\nreturn f(1, k=2)", ("ok", 3)),
    ("def f(a, *, k):\n    return a + k\nreturn f(1)", ("raise", "TypeError")),
    ("def f(a, *, k=4):\n    return a + k\nreturn f(1)", ("ok", 5)),
    ("def f(a):\n    return a\nreturn f(1, a=2)", ("raise", "TypeError")),
    ("def f(a, **kw):\n    return a, kw\nreturn f(1, b=2)", ("ok", (1, {"b": 2}))),
    ("def f(a):\n    return a\nreturn f(1, b=2)", ("raise", "TypeError")),
    ("def f(a, b):\n    return a\nreturn f(1)", ("raise", "TypeError")),
    ("def f(a):\n    return a\nreturn f(1, 2)", ("raise", "TypeError")),
    ("def f(*a):\n    return a\nreturn f(1, 2)", ("ok", (1, 2))),
    ("def f(a, /, b):\n    return a - b\nreturn f(5, b=1)", ("ok", 4)),
    ("def f(**kw):\n    return kw\nreturn f(**{'a': 1}, b=2)", ("ok", {"a": 1, "b": 2})),
    ("def f(**kw):\n    return kw\nreturn f(a=1, **{'a': 2})", ("raise", "TypeError")),
    (
        "for i in range(3):\n    try:\n        continue\n    finally:\n        x = i\nreturn x",
        ("ok", 2),
    ),
    ("try:\n    raise ValueError('m')\nexcept (KeyError, ValueError):\n    return 1", ("ok", 1)),
    (
        "try:\n    raise ValueError('m')\nexcept KeyError:\n    return 1\nexcept ValueError:\n    return 2",
        ("ok", 2),
    ),
    ("try:\n    x = 1\nexcept ValueError:\n    x = 2\nelse:\n    x = 3\nreturn x", ("ok", 3)),
    ("assert 1, 'never'\nreturn 1", ("ok", 1)),
    ("xs = [1]\nxs *= 2\nys = xs\nys += [3]\nreturn xs", ("ok", [1, 1, 3])),
    ("s = {1}\nt = s\nt |= {2}\nreturn sorted(s)", ("ok", [1, 2])),
    ("d = {'a': 1}\ne = d\ne |= {'b': 2}\nreturn d", ("ok", {"a": 1, "b": 2})),
    ("x = 3\nx //= 2\nx -= 5\nreturn x", ("ok", -4)),
    ("del_me = 1\ndel del_me\nreturn 1", ("ok", 1)),
    ("a = b = [1]\nreturn a is b", ("ok", True)),
    # functools.cache keys on the arguments passed (not on a default it changed),
    # and hashes each of them first
    ("return ch(1), ch(1), ch(2), ch(1)", ("ok", (1, 1, 2, 1))),
    ("return cl((1,)), cl((1, 2)), cl((1,))", ("ok", (1, 2, 1))),
    ("try:\n    ch(1, [])\nexcept TypeError:\n    return ch(3)", ("ok", 1)),
    ("try:\n    ch(1, (2, {}))\nexcept TypeError:\n    return ch(3), ch(4)", ("ok", (1, 2))),
    # a call refused for its arity is not the answer of one that binds
    ("try:\n    h(1, 2)\nexcept TypeError:\n    pass\nreturn h(1), h()", ("ok", (1, 1))),
    (
        "x = 0\nfor i in range(4):\n    if i == 1:\n        continue\n    x += i\nelse:\n    x += 100\nreturn x",
        ("ok", 105),
    ),
    (
        "x = 0\nfor i in range(4):\n    if i == 2:\n        break\n    x += i\nelse:\n    x += 100\nreturn x",
        ("ok", 1),
    ),
    (
        "try:\n    raise ValueError('m')\nexcept ValueError as e:\n    r = e is not None\nreturn r",
        ("ok", True),
    ),
    ("e = 1\ntry:\n    raise ValueError('m')\nexcept ValueError:\n    pass\nreturn e", ("ok", 1)),
    (
        "try:\n    raise ValueError('m')\nexcept ValueError:\n    x = 1\nfinally:\n    x = 2\nreturn x",
        ("ok", 2),
    ),
    (
        "try:\n    try:\n        raise KeyError\n    except ValueError:\n        x = 1\nexcept LookupError:\n    x = 2\nreturn x",
        ("ok", 2),
    ),
    ("[a, (b, c)] = 1, (2, 3)\nreturn a + b + c", ("ok", 6)),
]

#: (body, the evaluator's exact unknown reason)
UNKNOWN = [
    ("def f(**kw):\n    return kw\nreturn f(**3)", "** of a non-dict"),
    ("return {**3}", "** of a non-dict"),
    ("return b'x'", "constant not evaluated"),
    ("return 1j", "constant not evaluated"),
    ("return ...", "constant not evaluated"),
    ("return (1)()", "call of int not evaluated"),
    ("return top()", "super() outside a method"),
    ("return K.sup()", "super() outside a method"),
    ("return co()", "co is wrapped by a decorator that is not evaluated"),
    ("return str(1, 2, 3)", "str() with these arguments not evaluated"),
    ("return tuple(1, 2)", "tuple() with these arguments not evaluated"),
    ("return hasattr(1)", "hasattr() with these arguments not evaluated"),
    ("return abs()", "abs() with these arguments not evaluated"),
    ("return C.y", "unbound classmethod call"),
    ("try:\n    raise ValueError\nexcept h:\n    return 1", "except clause not understood"),
    ("try:\n    raise ValueError\nexcept ValueError:\n    raise", "bare raise not evaluated"),
    ("*a = [1]\nreturn a", "assignment target not evaluated"),
    ("a, *b = [1, 2]\nreturn b", "unpacking not evaluated"),
    ("a, b = [1, 2, 3]\nreturn b", "unpacking not evaluated"),
    ("while True:\n    return 1", "While statement not evaluated"),
    ("from ......... import x\nreturn x", "relative import leaves the tree"),
    ("with CM() as c:\n    pass\nreturn c", "c is read before it is bound"),
    ("def f(p=b'x'):\n    return p\nreturn f()", "constant not evaluated"),
]


def reason(unknown: str) -> str:
    return re.sub(r" \([^()]*\.py(:\d+)?\)$", "", unknown)


@pytest.mark.parametrize(("body", "expected"), SAME)
def test_answers_as_python(tmp_path: Path, body: str, expected: tuple[str, Any]) -> None:
    assert python_answer(PRELUDE, body) == expected
    assert our_answer(tmp_path, PRELUDE, body.split("\n")) == expected


@pytest.mark.parametrize(("body", "why"), UNKNOWN)
def test_unknown_with_its_reason(tmp_path: Path, body: str, why: str) -> None:
    prelude = PRELUDE + (CLASS_BODY_CALL if "C.y" in body else "")
    ours = our_answer(tmp_path, prelude, body.split("\n"))
    assert ours[0] == "unknown" and reason(ours[1]) == why, ours


def test_a_default_not_evaluated_is_asked_for_only_when_needed(tmp_path: Path) -> None:
    body = "def f(p=b'x'):\n    return p\nreturn f(2), f(p=3)"
    assert our_answer(tmp_path, PRELUDE, body.split("\n")) == ("ok", (2, 3))


def test_break_outside_a_loop_is_unknown(tmp_path: Path) -> None:
    """(Python's compiler refuses it; the file still parses.)"""
    for i, line in enumerate(["break", "continue"]):
        ours = our_answer(tmp_path / str(i), "", ["x = 1", line, "return x"])
        assert ours[0] == "unknown" and reason(ours[1]) == "break outside a loop", ours


SUPER = (
    "class A:\n    @classmethod\n    def m(cls):\n        return 1\n"
    "class B(A):\n"
    "    @classmethod\n    def comp(cls):\n        return [super().m() for _ in [1]]\n"
    "    @classmethod\n    def lam(cls):\n        return (lambda: super().m())()\n"
    "    @classmethod\n    def own(cls):\n        return super().m()\n"
)


def test_super_is_the_method_s_through_comprehensions_only(tmp_path: Path) -> None:
    """A comprehension runs as Python 3.12 inlines it; a nested function or lambda
    has no first argument of its own (Python raises RuntimeError)."""
    assert our_answer(tmp_path / "a", SUPER, ["return B.own(), B.comp()"]) == ("ok", (1, [1]))
    assert python_answer(SUPER, "return B.lam()") == ("raise", "RuntimeError")
    ours = our_answer(tmp_path / "b", SUPER, ["return B.lam()"])
    assert ours[0] == "unknown" and reason(ours[1]) == "super() outside a method", ours


def test_module_name_is_the_dotted_name(tmp_path: Path) -> None:
    assert our_answer(tmp_path, "", ["return __name__"]) == ("ok", MODULE)


BUDGETED = [
    "raise ValueError('x', [v for v in range(3000)])",
    "raise ValueError('x') from [v for v in range(3000)]",
    "raise ValueError(str([v for v in range(3000)]))",
    "assert False, [v for v in range(3000)]",
]


@pytest.mark.parametrize("line", BUDGETED)
def test_a_raise_whose_parts_run_out_of_steps_is_out_of_steps(tmp_path: Path, line: str) -> None:
    """The parts of a ``raise`` or ``assert`` that are not evaluated leave the
    statement's own exception, except the budget running out: that stops."""
    it, cls = load(tmp_path, cm("f", line))
    with it.question(capability=None, steps=2000), pytest.raises(LimitExceeded) as caught:
        ask(it, cls, "f")
    assert caught.value.reason == "step budget exhausted"


def test_deep_expression_in_a_call_is_a_nesting_limit(tmp_path: Path) -> None:
    deep = "-" * 600 + "1"
    it, cls = load(tmp_path, cm("f", f"return {deep}"))
    it.capability_read = 0
    with pytest.raises(LimitExceeded) as caught:
        ask(it, cls, "f")
    assert caught.value.reason == "expression nested too deeply"
    assert caught.value.line > 0 and it.capability_read == 0


def test_a_call_watcher_sees_calls_of_tree_functions(tmp_path: Path) -> None:
    it, cls = load(tmp_path, cm("f", "return h(5) + h(6)"), header=PRELUDE)
    seen: list[tuple[str, list[Any]]] = []

    def watch(func: PyFunction, args: list[Any], kwargs: dict[str, Any], node: Any) -> Any:
        seen.append((func.name, args))
        return 100 if func.name == "h" else it.invoke(func, args, kwargs, node, watched=False)

    it.call_watcher = watch
    assert ask(it, cls, "f") == 200
    assert seen == [("f", [cls]), ("h", [5]), ("h", [6])]


class Observer:
    """A GPU observer that counts what it is told and runs every call."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.gpu_reads = 0

    def observe(self, call: Any, run: Callable[[], Any]) -> Any:
        self.calls.append(call[0].name)
        return run()

    def read_gpu(self) -> None:
        self.gpu_reads += 1

    def listen(self) -> object:
        return None

    def heard(self, token: object) -> object:
        return None

    def hear_again(self, heard: object) -> None:
        pass


def test_a_gpu_observer_is_told_of_calls_and_gpu_reads(tmp_path: Path) -> None:
    it, cls = load(tmp_path, cm("f", "return h(2)"), header=PRELUDE)
    observer = Observer()
    it.gpu_observer = observer
    assert ask(it, cls, "f") == 2
    assert observer.calls == ["f", "h"]
    it.read_gpu(2)  # a machine fact's bit, not the GPU
    assert observer.gpu_reads == 0
    it.read_gpu()
    assert observer.gpu_reads == 1 and it.capability_read & CAPABILITY


def test_a_question_puts_its_gpu_back(tmp_path: Path) -> None:
    it, _ = load(tmp_path, cm("f", "return 1"))
    it.capability = (8, 0)
    with it.question(capability=(9, 0), steps=100) as q:
        assert q.capability == (9, 0) and it.capability == (9, 0)
        q.capability = (10, 0)
        assert it.capability == (10, 0)
    assert it.capability == (8, 0) and q.capability == (10, 0)
    q.capability = (12, 0)  # a closed question changes nothing
    assert it.capability == (8, 0) and q.capability == (12, 0)
    assert q.steps_spent == 0


def test_module_attribute_of_a_tree_module(tmp_path: Path) -> None:
    """An attribute of a module object: its name, or a submodule of the package."""
    it, cls = load(
        tmp_path,
        cm("f", "import vllm.mypkg", "return vllm.mypkg.sub.V, vllm.mypkg.W")
        + cm("g", "import os, vllm.mypkg.sub as s2", "return s2.V"),
        extra={"vllm/mypkg/__init__.py": "W = 2\n", "vllm/mypkg/sub.py": "V = 3\n"},
    )
    assert ask(it, cls, "f") == (3, 2)
    assert ask(it, cls, "g") == 3  # (the second name of one import statement)
    with pytest.raises(Raised, match="AttributeError"):
        it.module_attr(it.module("vllm.mypkg"), "nothing_here", NODE)


SUPER_CHECKS = """
class P:
    @classmethod
    def flag(cls):
        return cls.F
class A(P):
    F = 1
    @classmethod
    def checks(cls):
        reasons = []
        if super().flag() == 1:
            reasons.append('one')
        return reasons
class B(A):
    F = 2
"""


def test_a_check_reading_super_is_not_replayed_for_another_class(tmp_path: Path) -> None:
    """``super()`` reads the frame's class without naming it: such a check of a
    list-of-reasons body runs for each class, never remembered by the names it reads."""
    it, _ = load(tmp_path, cm("f", "return 1"), header=SUPER_CHECKS)
    it.lenient_functions = frozenset({"checks"})
    module = it.module(MODULE)
    assert module is not None
    a, b = (it.module_attr(module, name, NODE) for name in ("A", "B"))
    assert [ask(it, a, "checks"), ask(it, b, "checks"), ask(it, a, "checks")] == [
        ["one"],
        [],
        ["one"],
    ]


VET = "def vet(flag, size):\n    reasons = []\n    if flag:\n        reasons.append('flag')\n    if size > 2:\n        reasons.append(f'size {size}')\n    return reasons\n"


def test_a_list_of_reasons_function_outside_a_class_runs_check_by_check(tmp_path: Path) -> None:
    """(Its checks are planned as they first run: no flag runs are made for it.)"""
    it, cls = load(
        tmp_path, cm("f", "return vet(True, 1), vet(False, 3), vet(True, 3)"), header=VET
    )
    it.lenient_functions = frozenset({"vet"})
    assert ask(it, cls, "f") == (["flag"], ["size 3"], ["flag", "size 3"])
    assert ask(it, cls, "f") == (["flag"], ["size 3"], ["flag", "size 3"])
