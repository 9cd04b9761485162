"""Edges of the evaluator's operators, builtins and formatting (pyeval/ops.py,
builtins.py, formatting.py): each case either answers exactly as CPython does, or
is unknown for exactly the reason given (a limit, or a value the subset does not
evaluate), so a mutant of the rule it passes through answers differently."""

from __future__ import annotations

import pytest
from evaluator import _reason, as_python, our_answer

from sphinxext_attn.pyeval import Unknown
from sphinxext_attn.pyeval.formatting import format_value
from sphinxext_attn.pyeval.values import Budget, Caught

ENUMS = (
    "import enum\nclass I(enum.IntEnum):\n    A = 64\n"
    "class C(enum.Enum):\n    RED = 1\nclass S(str, enum.Enum):\n    X = 'x'\n"
)
NAMED = "from typing import NamedTuple\nclass NT(NamedTuple):\n    a: int\n    b: str\n"
CLASSES = (
    "class A:\n    v = 1\n    @property\n    def bad(self):\n        raise ValueError('no')\n"
    "class B(A):\n    pass\n"
)

#: (prelude, body): answered exactly as CPython answers it
SAME = [
    # ops.binop: ``abs(left) > 1`` (1 and -1 to any power stay small)
    ("", "return 1 ** 100000, (-1) ** 100001, 0 ** 100000"),
    ("", "return 2 ** 2048 > 0, 1 << 4095 > 0, (-2) ** 2048 > 0"),
    ("", "return 'ab' * 50000 == 'ab' * 50000, len('x' * 50000 + 'y' * 50000)"),
    ("", "return [1] * 0, 3 * [0], 'x' * -2"),
    ("", "return {1} | {2}, {1: 2} | {3: 4}"),
    ("", "return 7 // 2, -7 % 3, 2 ** -1, 5 ^ 3, 6 & 3, 8 >> 2"),
    ("", "return 0 ** -1"),
    ("", "return '%5d|%-4s|%.2f' % (42, 'ab', 3.14159), len('%99500d' % 1)"),
    ("", "return 'a' in 'cat', 3 in range(5), 3 in {3: 1}, [1] in [[1]]"),
    ("", "return 1 in 'abc'"),
    ("", "return [1] in {1: 2}"),
    ("", "return (1, 2) < (1, 3), [2] > [1, 5], 'b' >= 'a', 2 <= 2.0"),
    ("", "return 1 < 'a'"),
    ("", "return -True, +True, ~True, -2.5, ~5"),
    (ENUMS, "return I.A == 64, C.RED == 1, S.X == 'x', I.A == I.A, C.RED != C.RED"),
    (ENUMS, "return S.X in 'xyz', [I.A] == [64], I.A in {64}"),
    (ENUMS + "class T(enum.Enum):\n    X = 'x'\n", "return T.X in 'xyz'"),
    (NAMED, "return NT(1, 'x') == (1, 'x'), (1, 'x') == NT(1, 'x'), NT(1, 'x') == NT(1, 'y')"),
    # builtins
    (NAMED, "return len(NT(1, 'x')), isinstance(NT(1, 'x'), tuple), len(range(3, 9))"),
    (NAMED, "return isinstance(NT(1, 'x'), list), isinstance(NT(1, 'x'), (int, str))"),
    ("", "return min([], default=5), max([3, 1, 2]), min(4, 2, key=lambda v: -v)"),
    ("", "return min([1], default=2, key=None), max('a', 'b')"),
    ("", "return min(1, 2, default=3)"),
    ("", "return max([])"),
    ("", "return sorted([3, 1, 2], reverse=True), sorted('bca')"),
    (ENUMS, "return isinstance(I.A, int), isinstance(C.RED, int), isinstance(S.X, str)"),
    (ENUMS, "return isinstance(I.A, I), isinstance(C.RED, I), isinstance(I, I)"),
    (CLASSES, "return isinstance(A, A), isinstance(B(), A), isinstance(A(), B)"),
    (CLASSES, "return isinstance(1, A), isinstance(None, A), isinstance([], A)"),
    (
        CLASSES + "import builtins\n",
        "return isinstance(A, builtins.type), isinstance(1, builtins.type)",
    ),
    (CLASSES, "return issubclass(B, A), issubclass(A, B), issubclass(B, (B, A))"),
    (CLASSES, "return getattr(A, 'v'), getattr(A, 'nope', 7), hasattr(A, 'v'), hasattr(A, 'no')"),
    (CLASSES, "return getattr(A, 1)"),
    (CLASSES, "return getattr(A, 'nope')"),
    (CLASSES, "return getattr(A(), 'bad', 7)"),
    (CLASSES, "return hasattr(A(), 'bad')"),
    ("", "return int(), str(), int('ff', 16), float('1.5'), bool([]), tuple('ab')"),
    ("", "return int(5, 2)"),
    ("", "return int('zz')"),
    ("", "return dict([(1, 2)], a=3), dict(), frozenset([1, 1])"),
    ("", "return dict([(1, 2, 3)])"),
    ("", "return dict({1: 2}, {3: 4})"),
    ("", "return range('a')"),
    ("", "return list(range(3, 0, -1)), list(enumerate('ab', 1)), list(zip('ab', [1, 2]))"),
    ("", "return list(zip([1], [1, 2], strict=True))"),
    ("", "return list(reversed([1, 2])), sum([1, 2], 10), sum([[1]], [])"),
    ("", "return sum(['a'], '')"),
    ("", "return abs(-3), abs(-2.5), print('x'), callable(len), callable(1)"),
    (CLASSES, "return type(A()) is A, type(1) is int, type('') is str, callable(A)"),
    ("", "return type(1, 2)"),
    ("", "return type(1, 2, 3, 4)"),
    ("", "return len(frozenset([1, 2])), len({1: 2}), len({3}), len('ab'), len((1,))"),
    ("", "return len(1, 2)"),
    ("", "return len(x=1)"),
    # formatting
    ("", 'return f\'{1:>5}|{2.5:.3f}|{"s"!r}|{"t"!s:>3}|{"é"!a}\''),
    ("", "return f'{[1, \"a\"]}|{(None, 2.0)}|{-3:+d}'"),
    (NAMED, "return f'{NT(1, \"x\")}'"),
    (
        "import enum\nclass S(enum.StrEnum):\n    X = 'x'\nclass I(enum.IntEnum):\n    A = 3\n"
        "class P(str, enum.Enum):\n    Y = 'y'\n",
        "return str(S.X), f'{S.X}', str(I.A), f'{I.A}', str(P.Y), f'{P.Y!s}'",
    ),
]


@pytest.mark.parametrize(("prelude", "body"), SAME)
def test_answers_as_python(tmp_path, prelude, body):
    as_python(tmp_path, prelude, body)


#: (prelude, body, reason): unknown for this reason, wherever CPython answers
UNKNOWN = [
    ("", "return (1 << 4095) + (1 << 4095)", "integer too large to evaluate"),
    ("", "return 1 << 4096", "integer too large to evaluate"),
    ("", "return 3 ** 5000", "integer too large to evaluate"),
    ("", "return 1 << 5000", "integer too large to evaluate"),
    ("", "return 'ab' * 50001", "sequence too long to evaluate"),
    ("", "return 50001 * 'ab'", "sequence too long to evaluate"),
    ("", "return 'x' * 50000 + 'y' * 50001", "sequence too long to evaluate"),
    ("", "x = 'x' * 60000\nreturn f'{x}{x}'", "sequence too long to evaluate"),
    ("", "return 1 @ 2", "operator MatMult not evaluated"),
    ("", "return 1 | 'a'", "| on these values is not evaluated (a type union?)"),
    ("", "return {1} | [2]", "| on these values is not evaluated (a type union?)"),
    ("", "return 1 + None", "arithmetic on NoneType not evaluated"),
    ("", "return (-8) ** 0.5", "complex numbers not evaluated"),
    ("", "return '%s' % ([1],)", "% formatting of these values not evaluated"),
    ("", "return '%*d' % (3, 4)", "% formatting with this width not evaluated"),
    ("", "return '%.*f' % (3, 4.0)", "% formatting with this width not evaluated"),
    ("", "return '%1234567890123d' % 1", "% formatting with this width not evaluated"),
    ("", "return '%99700d' % 1", "string too long to evaluate"),
    # the arguments' own length counts before the text is built
    ("", "return '%s%s' % ('x' * 60000, 'y' * 60000)", "string too long to evaluate"),
    ("", "return 1 in 5", "membership in int not evaluated"),
    ("", "return None < 1", "ordering of NoneType and int not evaluated"),
    ("", "return 1 > None", "ordering of int and NoneType not evaluated"),
    ("", "return -None", "unary USub not evaluated"),
    ("", "return ~1.5", "unary Invert not evaluated"),
    ("", "return sorted([1, 'a'])", "sorting values that do not order"),
    ("", "return max(1, 'a')", "min/max of values that do not order"),
    ("", "return isinstance(1, os.PathLike)", "isinstance() with a type outside the tree"),
    ("", "return issubclass(int, object)", "issubclass() with a type outside the tree"),
    ("", "return int('1', base=2)", "int() with these arguments not evaluated"),
    ("", "return str(1, 2)", "str() with these arguments not evaluated"),
    ("import numpy\n", "return str(numpy.pi)", "str() of numpy.pi not evaluated"),
    ("", "return float(None)", "float() of NoneType not evaluated"),
    ("", "return range(200000)", "range too long to evaluate"),
    ("", "return len(None)", "len() of NoneType not evaluated"),
    ("", "return abs('a')", "abs() of a non-number"),
    (CLASSES, "return isinstance(len, A)", "isinstance() with a type outside the tree"),
    ("", "return type(1, 2, 3)", "a class made by type() not evaluated"),
    ("", "return type(len)", "type() of this value not evaluated"),
    ("", "return classmethod(len)", "classmethod() called directly"),
    ("", "return iter([])", "iter() not evaluated"),
    ("", "return f'{1:abc}'", "format spec not evaluated"),
    ("", "return f'{\"a\":d}'", "format spec not evaluated"),
    ("", "return f'{1:1234567}'", "string too long to evaluate"),
    ("", "return f'{1:.100001}'", "string too long to evaluate"),
    ("", "return f'{1:100001}'", "string too long to evaluate"),
    ("", "return f'{[1]:>3}'", "formatting list not evaluated"),
    ("", "return f'{[[1]]}'", "formatting list not evaluated"),
    ("", "return f'{len}'", "formatting Builtin not evaluated"),
    ("import numpy\n", "return f'{numpy.pi}'", "formatting External not evaluated"),
    ("import torch\n", "return f'{torch.float16:>9}'", "formatting External not evaluated"),
    (CLASSES, "return f'{A()}'", "formatting Instance not evaluated"),
    ("", "try:\n    raise ValueError('a')\nexcept ValueError as e:\n    return f'{e:>4}'",
     "formatting Caught not evaluated"),
    ("", "t = ()\nfor _ in range(1010):\n    t = (t,)\nreturn str(t)", "value nested too deeply"),
    ("", "t = (1,)\nfor _ in range(60):\n    t = (t, t)\nreturn str(t)", "step budget exhausted"),
]  # fmt: skip


@pytest.mark.parametrize(("prelude", "body", "reason"), UNKNOWN)
def test_unknown_for_its_reason(tmp_path, prelude, body, reason):
    kind, detail = our_answer(tmp_path, prelude, body.split("\n"))
    assert (kind, _reason(detail)) == ("unknown", reason)


def test_a_class_and_a_torch_name_are_formatted_by_their_names(tmp_path):
    """CPython names the module a class was defined in (here the backend's module)
    and prints a torch dtype as its dotted name."""
    assert our_answer(tmp_path / "a", CLASSES, ["return f'{A}'"]) == (
        "ok",
        "<class 'vllm.v1.attention.backends.my_attn.A'>",
    )
    assert our_answer(tmp_path / "b", "import torch\n", ["return f'{torch.float16}!'"]) == (
        "ok",
        "torch.float16!",
    )
    # a torch object is never equal to plain data (not a fact of the machine)
    body = ["return torch.float16 == 'torch.float16', 1 != torch.int8"]
    assert our_answer(tmp_path / "c", "import torch\n", body) == ("ok", (False, True))


def test_an_exception_known_exactly_is_formatted_as_python_formats_it():
    """``except ImportError as e`` where the evaluator raised it itself knows its one
    argument: ``f'{e}'`` is the message and ``f'{e!r}'`` Python's repr of it."""
    caught = Caught("ModuleNotFoundError", "No module named 'x'")
    exc = ModuleNotFoundError("No module named 'x'")
    for conversion, want in ((-1, f"{exc}"), (ord("s"), f"{exc!s}"), (ord("r"), f"{exc!r}")):
        assert format_value(caught, conversion, "", Budget(), ("m.py", 1)) == want
    with pytest.raises(Unknown, match="formatting Caught"):
        format_value(Caught("ValueError"), -1, "", Budget(), ("m.py", 1))
