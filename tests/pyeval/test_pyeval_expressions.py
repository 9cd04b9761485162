"""The safe evaluator (core/pyeval) on small invented trees: expressions, statements
and values answer as in Python (operators, comprehensions, str-enums, dataclasses,
device capabilities, loops, skipped logging calls, mutable defaults), so a backend's
answers are the ones vLLM would get."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from evaluator import HEADER, ask, cm, load
from treebuilder import dedent

from sphinxext_attn.pyeval import Interpreter

EXPRESSIONS: list[tuple[str, Any]] = [
    (
        "(1 + 2 * 3, 7 // 2, -7 // 2, 7 % 3, 2 ** 10, 10 / 4, -5, ~5)",
        (7, 3, -4, 1, 1024, 2.5, -5, -6),
    ),
    ("(7 & 3, 7 | 8, 7 ^ 1, 1 << 3, 256 >> 2, 2 ** -1)", (3, 15, 6, 8, 64, 0.5)),
    ("(1 < 2 <= 2, 3 > 2 > 2, 1 == 1.0, 'a' != 'b')", (True, False, True, True)),
    ("(None is None, [] is not None, not 0, not [1])", (True, True, True, False)),
    ("(False and torch.cuda.is_available(), True or torch.cuda.x())", (False, True)),
    ("(0 or 'd', 3 and 4, 1 if [] else 2)", ("d", 4, 2)),
    (
        "('b' in 'abc', 3 in [1, 2], 2 in range(5), 'k' in {'k': 1}, 4 not in (4,))",
        (True, False, True, True, False),
    ),
    ("f'{1 + 1}-{\"x\"!r}-{7:03d}-{2.5:.2f}'", "2-'x'-007-2.50"),
    ("[i * 2 for i in range(5) if i % 2]", [2, 6]),
    ("{k: v for k, v in [(1, 2), (3, 4)]}", {1: 2, 3: 4}),
    ("({i % 3 for i in range(10)}, sum(i for i in range(4)))", ({0, 1, 2}, 6)),
    ("[(a, b) for a in 'ab' for b in (1, 2) if b > 1]", [("a", 2), ("b", 2)]),
    (
        "([1, 2, 3][::-1], 'abc'[1:], (1, 2) + (3,), [0] * 3, 'ab' * 2)",
        ([3, 2, 1], "bc", (1, 2, 3), [0, 0, 0], "abab"),
    ),
    ("(sorted([3, 1, 2], reverse=True), max([1, 5, 3], key=lambda v: -v))", ([3, 2, 1], 1)),
    ("(min(3, 1), any([]), all([]), abs(-3), isinstance(True, int))", (1, False, True, 3, True)),
    ("('a,b'.split(','), ' '.join(['x', 'y']), 'Ab'.lower())", (["a", "b"], "x y", "ab")),
    ("(list(zip([1, 2], 'ab')), list(enumerate('ab', 1)))", ([(1, "a"), (2, "b")],) * 2),
    ("((lambda a, b=2: a + b)(1), {**{'a': 1}, 'b': 2}, len({'a': 1}))", (3, {"a": 1, "b": 2}, 1)),
    ("(AttentionType.DECODER == 'decoder', 'encoder' == AttentionType.ENCODER)", (True, True)),
    ("AttentionType('encoder') is AttentionType.ENCODER", True),
    ("(AttentionType.DECODER.value, AttentionType['ENCODER'].name)", ("decoder", "ENCODER")),
    (
        "[m.name for m in AttentionType if m != 'decoder']",
        ["ENCODER", "ENCODER_ONLY", "ENCODER_DECODER"],
    ),
    (
        "(AttentionType.DECODER in ['decoder'], f'{AttentionType.DECODER}')",
        (True, "AttentionType.DECODER"),
    ),
    (
        "(Cap(9, 0) >= Cap(8, 0), Cap(8, 9) < Cap(9, 0), Cap(10, 0) > Cap(10, 0))",
        (True, True, False),
    ),
    (
        "(Cap(12, 1) <= Cap(12, 0), Cap(9, 0) == Cap(major=9, minor=0), Cap(9, 0) != Cap(9, 1))",
        (False, True, True),
    ),
    ("(Cap(9, 0) == (9, 0), Cap(10, 3).to_int(), Cap(9, 0).as_version_str())", (True, 103, "9.0")),
    ("(Cap(8, 6).major, Cap(8, 6)[1], tuple(Cap(7, 5)))", (8, 6, (7, 5))),
    ("(MultipleOf(16).base, MultipleOf(base=8).base)", (16, 8)),
    ("(isinstance(MultipleOf(16), MultipleOf), isinstance(16, MultipleOf))", (True, False)),
    ("[b.base if isinstance(b, MultipleOf) else b for b in [MultipleOf(16), 32]]", [16, 32]),
    ("(os.getenv('VLLM_PROBE_X', 'dflt'), os.getenv('VLLM_PROBE_Z'))", ("dflt", None)),
    ("os.environ.get('VLLM_PROBE_X', '0') == '1'", False),
    ("cls.__name__ + '.' + cls.get_name()", "MyBackend.MY"),
]


@pytest.fixture(scope="module")
def expressions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Interpreter, Any]:
    body = "@staticmethod\ndef get_name():\n    return 'MY'\n"
    for i, (expr, _) in enumerate(EXPRESSIONS):
        body += f"\n@classmethod\ndef e{i}(cls):\n    return {expr}\n"
    return load(tmp_path_factory.mktemp("expr"), body)


@pytest.mark.parametrize("i", range(len(EXPRESSIONS)), ids=[e[0][:40] for e in EXPRESSIONS])
def test_expression(expressions, i, monkeypatch):
    monkeypatch.setenv("VLLM_PROBE_X", "set in the environment")  # never read: vLLM's defaults
    it, cls = expressions
    assert ask(it, cls, f"e{i}") == EXPRESSIONS[i][1]


def test_if_return_and_loops(tmp_path):
    body = """
    @classmethod
    def f(cls, n):
        total = 0
        for i in range(10):
            if i == 3:
                continue
            if i == n:
                break
            total += i
        else:
            return -1
        if total > 10:
            return "big"
        elif total > 3:
            return "mid"
        return total
    """
    it, cls = load(tmp_path, dedent(body))
    assert [ask(it, cls, "f", n) for n in (1, 5, 7, 99)] == [0, "mid", "big", -1]


def test_logging_calls_are_skipped(tmp_path):
    body = cm(
        "f",
        "logger.warning_once('x %s', torch.cuda.get_device_properties(0))",
        "logger.info('y')",
        "return 1",
    )
    it, cls = load(tmp_path, body, header=HEADER + "logger = init_logger(__name__)\n")
    assert ask(it, cls, "f") == 1


SEMANTICS = [
    ("MultipleOf(16) == MultipleOf(16)", True, "dataclass instances compare by fields"),
    (
        "str(AttentionType.DECODER)",
        "AttentionType.DECODER",
        "str() of a str-enum member is its qualified name",
    ),
    ("{AttentionType.DECODER: 1}.get('decoder')", 1, "a str-enum member hashes like its value"),
    ("dict(a=1)", {"a": 1}, "dict() takes keyword arguments"),
    ("~True", -2, "~ on a bool inverts its int (and the host Python does not warn)"),
]


@pytest.mark.parametrize(("expr", "want", "why"), SEMANTICS, ids=[b[0] for b in SEMANTICS])
def test_semantics_as_in_python(tmp_path, expr, want, why):
    it, cls = load(tmp_path, f"@classmethod\ndef f(cls):\n    return {expr}\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the analysed code's operations warn nothing here
        assert ask(it, cls, "f") == want, why


def test_str_enum_and_dataclass_values_behave_as_in_python(tmp_path):
    header = (
        HEADER
        + "from dataclasses import dataclass\n\n\n@dataclass(eq=False)\nclass Ident:\n    x: int\n"
    )
    body = cm(
        "f",
        "d = {AttentionType.DECODER: 1, 'encoder': 2}",
        "s = {AttentionType.DECODER, 'decoder'}",
        "return (d['decoder'], d[AttentionType.ENCODER], len(s), Ident(1) == Ident(1),",
        "        MultipleOf(16) != MultipleOf(32), f'{AttentionType.DECODER}')",
    )
    it, cls = load(tmp_path, body, header=header)
    assert ask(it, cls, "f") == (1, 2, 1, False, True, "AttentionType.DECODER")


def test_a_default_is_one_object_for_every_call(tmp_path):
    """As at ``def`` time: a list default keeps what earlier calls appended (so a
    call that reads it is never answered from the call memo)."""
    body = cm("g", "v.append(1)", "return len(v)", args="v=[]")
    body += cm(
        "f",
        "def inner(v=[]):",
        "    v.append(1)",
        "    return len(v)",
        "inner()",
        "return inner(), cls.g(), cls.g(), cls.g([])",
    )
    it, cls = load(tmp_path, body)
    assert ask(it, cls, "f") == (2, 1, 2, 1)


def test_enum_members_with_a_leading_underscore_are_members(tmp_path):
    """``_310P`` is a member as Python has it (issue 35); dunders, ``_sunder_`` and
    private names are not. The same question is put to CPython."""
    prelude = (
        "import enum\n\n\nclass Soc(enum.Enum):\n    _310P = 1\n    A2 = 2\n"
        "    _ignore_ = []\n    __private = 3\n"
    )
    body = "return ([m.name for m in Soc], Soc._310P.value, Soc['_310P'].name)"
    header = HEADER + "\n" + prelude
    it, cls = load(tmp_path, cm("f", *body.splitlines()), header=header)
    want = (["_310P", "A2"], 1, "_310P")
    namespace: dict[str, Any] = {}
    exec(compile(prelude + "\ndef _f():\n    " + body + "\n", "<case>", "exec"), namespace)
    assert namespace["_f"]() == want
    assert ask(it, cls, "f") == want
