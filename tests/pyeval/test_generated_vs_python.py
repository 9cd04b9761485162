"""The evaluator against CPython on generated expressions (this test's own text,
never analysed code): operators, comparisons, ``and``/``or``/``not``, ``in``,
conditional expressions, subscripts and slices, a few builtins and str methods,
over small literals and the names of a prelude. Each answer must be CPython's
value (same types, floats exactly), CPython's exception class, or an explicit
unknown; anything else fails with the expression."""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from evaluator import our_answer, python_answer, same_answer
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

#: Names every expression may use (module-level code before the class).
PRELUDE = (
    "a = 7\nb = -3\nbig = 10 ** 20\ns = 'Ab,c'\nt = (1, 'x', None)\nxs = [3, 1, 2]\nn = None\n"
)

INTS = ["0", "1", "-1", "2", "3", "-7", "13", "a", "b", "big", "-big", "2 ** 64", "True", "False"]
STRS = ["''", "'a'", "'Ab'", "' x '", "'a,b'", "'abc'", "'A'", "','", "s"]
EXPONENTS = ["0", "1", "2", "3", "5", "(-1)", "(-2)"]
NUMERALS = ["'12'", "' -3 '", "'1_0'", "'x'", "''", "'٣'"]
SMALL = ["-2", "-1", "0", "1", "2", "3", "5"]

#: ``1 is None``, generated: meant, not a slip
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

_leaf_int = st.sampled_from(INTS)
_leaf_str = st.sampled_from(STRS)
_small = st.sampled_from(SMALL)


def p(text: str) -> str:
    return f"({text})"


@cache
def ints(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return _leaf_int
    sub, anyv, seq = ints(depth - 1), values(depth - 1), seqs(depth - 1)
    arith = st.sampled_from(["+", "-", "*", "//", "%"])
    binop = st.builds(lambda x, o, y: f"{p(x)} {o} {p(y)}", sub, arith, sub)
    return st.one_of(
        _leaf_int,
        *[binop] * 3,  # the operators are the point: three shares of the choices
        st.builds(lambda x, e: f"{p(x)} ** {e}", sub, st.sampled_from(EXPONENTS)),
        st.builds(lambda o, x: f"{o}{p(x)}", st.sampled_from(["-", "+", "~"]), sub),
        st.builds(lambda x: f"len({x})", st.one_of(seq, strs(depth - 1))),
        st.builds(lambda x: f"abs({x})", sub),
        st.builds(lambda f, x, y: f"{f}({x}, {y})", st.sampled_from(["min", "max"]), sub, sub),
        st.builds(lambda f, x: f"{f}({x})", st.sampled_from(["min", "max", "sum"]), seq),
        st.builds(
            lambda x: f"int({x})", st.one_of(sub, bools(depth - 1), st.sampled_from(NUMERALS))
        ),
        st.builds(lambda c, x, y: f"{p(x)} if {p(c)} else {p(y)}", anyv, sub, sub),
        st.builds(lambda x, i: f"{p(x)}[{i}]", seq, _small),
    )


@cache
def bools(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return st.sampled_from(["True", "False", "n is None"])
    anyv, sub = values(depth - 1), bools(depth - 1)
    cmp = st.sampled_from(["==", "!=", "<", "<=", ">", ">="])
    single = st.sampled_from(["None", "True", "False", "n", "xs"])  # identity is defined
    iv, sv = ints(depth - 1), strs(depth - 1)
    same = st.one_of(st.tuples(iv, iv), st.tuples(sv, sv), st.tuples(anyv, anyv))
    return st.one_of(
        st.builds(lambda xy, o: f"{p(xy[0])} {o} {p(xy[1])}", same, cmp),
        st.builds(lambda x, o, y, q, z: f"{p(x)} {o} {p(y)} {q} {p(z)}", iv, cmp, iv, cmp, iv),
        st.builds(
            lambda x, o, y: f"{p(x)} {o} {p(y)}",
            anyv,
            st.sampled_from(["in", "not in"]),
            st.one_of(seqs(depth - 1), sv),
        ),
        st.builds(
            lambda x, o, y: f"{p(x)} {o} {y}", anyv, st.sampled_from(["is", "is not"]), single
        ),
        st.builds(
            lambda x, o, y: f"{p(x)} {o} {p(y)}", anyv, st.sampled_from(["and", "or"]), anyv
        ),
        st.builds(lambda x: f"not {p(x)}", anyv),
        st.builds(lambda x: f"bool({x})", anyv),
        st.builds(
            lambda x, k: f"isinstance({x}, {k})",
            anyv,
            st.sampled_from(["int", "str", "tuple", "(int, str)", "bool"]),
        ),
        st.builds(lambda f, x: f"{f}({x})", st.sampled_from(["any", "all"]), seqs(depth - 1)),
        st.builds(
            lambda x, m, y: f"{p(x)}.{m}({y})",
            sv,
            st.sampled_from(["startswith", "endswith"]),
            st.one_of(sv, st.tuples(sv, sv).map(lambda yz: f"({yz[0]}, {yz[1]})"), iv),
        ),
        sub,
    )


@cache
def strs(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return _leaf_str
    sub = strs(depth - 1)
    bound = st.sampled_from(["", *SMALL])
    step = st.sampled_from(["", ":-1", ":2", ":-2", ":0"])
    slice_ = st.builds(lambda i, j, k: f"{i}:{j}{k}", bound, bound, step)
    return st.one_of(
        _leaf_str,
        st.builds(lambda x, y: f"{p(x)} + {p(y)}", sub, sub),
        st.builds(lambda x, k: f"{p(x)} * {k}", sub, _small),
        st.builds(lambda x, m: f"{p(x)}.{m}()", sub, st.sampled_from(["upper", "lower", "strip"])),
        st.builds(lambda x, y: f"{p(x)}.strip({y})", sub, _leaf_str),
        st.builds(
            lambda x, y, z, k: f"{p(x)}.replace({y}, {z}{k})",
            sub,
            _leaf_str,
            _leaf_str,
            st.sampled_from(["", ", 1", ", -1", ", 0"]),
        ),
        st.builds(
            lambda x, y: f"{p(x)}.join({y})",
            _leaf_str,
            st.lists(sub, max_size=3).map(lambda v: "[" + ", ".join(v) + "]"),
        ),
        st.builds(lambda x: f"str({x})", st.one_of(ints(depth - 1), bools(depth - 1))),
        st.builds(lambda x, i: f"{p(x)}[{i}]", sub, _small),
        st.builds(lambda x, sl: f"{p(x)}[{sl}]", sub, slice_),
        st.builds(lambda c, x, y: f"{p(x)} if {p(c)} else {p(y)}", values(depth - 1), sub, sub),
    )


@cache
def seqs(depth: int) -> st.SearchStrategy[str]:
    leaf = st.one_of(_leaf_int, _leaf_str, st.just("None"))
    if depth == 0:
        elems = st.lists(leaf, max_size=3)
        return st.one_of(
            st.sampled_from(["t", "xs", "[]", "()"]),
            elems.map(lambda v: "[" + ", ".join(v) + "]"),
            elems.map(lambda v: "(" + "".join(x + ", " for x in v) + ")"),
        )
    sub, iv = seqs(depth - 1), ints(depth - 1)
    ilist = st.lists(iv, max_size=3).map(lambda v: "[" + ", ".join(v) + "]")
    return st.one_of(
        seqs(0),
        ilist,
        st.builds(lambda x: f"sorted({x})", st.one_of(ilist, strs(depth - 1))),
        st.builds(lambda x, y: f"{p(x)} + {p(y)}", sub, sub),
        st.builds(lambda x, k: f"{p(x)} * {k}", sub, _small),
        st.builds(lambda x, i, j: f"{p(x)}[{i}:{j}]", sub, _small, _small),
        st.builds(lambda x: f"{p(x)}[::-1]", sub),
        st.builds(lambda *a: "list(range(" + ", ".join(a) + "))", _small, _small, _small),
        st.builds(lambda x: f"list(range({x}))", _small),
        st.builds(
            lambda x, y: f"{p(x)}.split({y})",
            strs(depth - 1),
            st.sampled_from(["", "','", "',', 1", "None, 0", "' '"]),
        ),
        st.builds(lambda c, x, y: f"{p(x)} if {p(c)} else {p(y)}", values(depth - 1), sub, sub),
    )


@cache
def values(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return st.one_of(_leaf_int, _leaf_str, seqs(0), st.just("None"))
    return st.one_of(ints(depth), bools(depth), strs(depth), seqs(depth), st.just("n"))


def typed(value: Any) -> Any:
    """``value`` with the type of each part, floats by repr (exact, nan equals nan)."""
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [typed(v) for v in value])
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else repr(value))
    return (type(value).__name__, value)


def answers(root: Path, expr: str) -> tuple[tuple[str, Any], tuple[str, Any]]:
    """(the evaluator's answer, CPython's answer) for ``return expr``."""
    assert len(expr) < 2000, expr  # size guard: the generator keeps expressions small
    compile(expr, "<generated>", "eval")  # the generator writes valid Python
    body = f"return {expr}"
    return our_answer(root, PRELUDE, [body]), python_answer(PRELUDE, body)


def agrees(ours: tuple[str, Any], python: tuple[str, Any]) -> bool:
    if ours[0] == "unknown":
        return True  # an explicit unknown is never wrong
    return same_answer(ours, python, typed)


#: Expressions the generator found worth keeping, each answered as CPython does.
PINNED = [
    "(-7) // 2, (-7) % 2, 7 // (-2), 7 % (-2), (-7) % (-2), 0 % 5",
    "(-2) ** (-1), 2 ** (-2), (-big) ** 3, big ** 0, 0 ** 0",
    "~a, ~(-1), -True, +False, ~True, not 0, not ''",
    "1 < a <= 7 < big, 1 < b < 5, a == 7 != b, a > b >= -3",
    "'a' < 'b', 'Ab' > 'a', (1, 2) < (1, 3), [1] <= [1, 0], () < (0,)",
    "t[1:], xs[::-1], s[-1], s[5:], xs[-2:-1], (1, 2, 3)[3:1]",
    "0 or '' or 'x', 3 and [] and 5, None or 0, 'a' and 'b', not xs",
    "2 in xs, 'x' in t, 'b,' in s, '' in s, None in t, 4 not in xs",
    "len(s), abs(b), min(a, b), max(xs), sum(xs), sorted(s), sorted([3, -1])",
    "list(range(5, -2, -2)), list(range(-2)), list(range(1, 5, 3)), list(range(3))",
    "isinstance(True, int), isinstance(t, tuple), isinstance('', (int, str)), bool(t)",
    "any([0, '']), all(()), any(xs), all([1, None]), int(True), int(-3)",
    "s.upper(), s.lower(), ' x '.strip(), s.split(','), 'abc'.replace('b', '')",
    "'-'.join(['a', s]), ''.join([]), ','.join(sorted('cab'))",
    "s.startswith('A'), s.endswith('c'), s.startswith(''), 'a,b'.split(''.join([]) or ',')",
    "xs == (3, 1, 2), t != [1, 'x', None], [] == (), xs[:] == xs, (1,) == (True,)",
    "a if xs else b, a if [] else b, 'y' if n is None else 'z', t is t, n is not None",
    "str(big), str(-0), str(True), 'ab' * 2, [0] * (-1), (1,) * 0, xs + [4], t + ()",
]

#: Expressions CPython raises for, each raising the same exception class in the evaluator.
RAISES = [
    "1 // 0",
    "a % 0",
    "0 ** (-1)",
    "xs[5]",
    "s[9]",
    "t[-4]",
    "1 < 'a'",
    "[] < ()",
    "min([])",
    "max(())",
    "max()",
    "min(default=1)",
    "sum(['a'])",
    "list(range(1, 2, 0))",
    "'a'.join([1])",
    "s.split('')",
    "(2 ** 64) ** (-1) * 'a'",
    "int('x')",
]


def test_pinned_expressions_answer_with_values(tmp_path: Path) -> None:
    """The generator's fixed examples are not degenerate: each answers with CPython's value."""
    for i, expr in enumerate(PINNED):
        ours, python = answers(tmp_path / str(i), expr)
        assert python[0] == "ok", (expr, python)
        assert ours == python and typed(ours[1]) == typed(python[1]), (expr, ours, python)


@pytest.mark.parametrize("expr", RAISES)
def test_raising_expressions_raise_what_python_raises(tmp_path: Path, expr: str) -> None:
    ours, python = answers(tmp_path, expr)
    assert python[0] == "raise", (expr, python)
    assert ours == python, f"{expr!r}: evaluator {ours!r}, Python {python!r}"


#: Each generated test: a fixed sequence of examples (the same on every run), a few
#: seconds in all; a failure names its expression.
GENERATED = settings(
    derandomize=True,
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def compare(factory: pytest.TempPathFactory, expr: str) -> None:
    ours, python = answers(factory.mktemp("gen"), expr)
    assert agrees(ours, python), f"{expr!r}: evaluator {ours!r}, Python {python!r}"


@GENERATED
@given(expr=ints(3))
@example(expr="(-big) // 3 % 7 ** 2 - (a - b)")
def test_generated_numbers(tmp_path_factory: pytest.TempPathFactory, expr: str) -> None:
    compare(tmp_path_factory, expr)


@GENERATED
@given(expr=bools(3))
@example(expr="(xs) == ((3, 1, 2))")  # a list is never equal to a tuple
def test_generated_truths(tmp_path_factory: pytest.TempPathFactory, expr: str) -> None:
    compare(tmp_path_factory, expr)


@GENERATED
@given(expr=st.one_of(strs(3), seqs(3)))
@example(expr="xs * (-1) or t[::-1]")
def test_generated_strings_and_sequences(
    tmp_path_factory: pytest.TempPathFactory, expr: str
) -> None:
    compare(tmp_path_factory, expr)


@GENERATED
@given(expr=values(3))
@example(expr="-s if n is None else len(3) or abs('a') or ~(2 ** (-1))")  # unknown, not wrong
def test_generated_mixed(tmp_path_factory: pytest.TempPathFactory, expr: str) -> None:
    compare(tmp_path_factory, expr)
