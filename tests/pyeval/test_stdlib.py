"""What the standard library answers the same on every machine (pyeval/stdlib.py):
each rule's edge, where a mutant of the rule would answer differently."""

from __future__ import annotations

import math

import pytest
from evaluator import as_python, cm, load

from sphinxext_attn.pyeval import Raised, stdlib
from sphinxext_attn.pyeval.scope import MISSING
from sphinxext_attn.pyeval.values import External


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("os.path.join", ["a", "b/c"], "a/b/c"),
        ("os.path.dirname", ["/x/y.py"], "/x"),
        ("os.path.basename", ["/x/y.py"], "y.py"),
        ("math.gcd", [12, 18], 6),
        ("math.lcm", [4, 6], 12),
        ("math.ceil", [2.5], 3),
        ("math.floor", [2.5], 2),
        ("math.log2", [8], 3.0),
        ("math.sqrt", [16], 4.0),
        ("typing.cast", ["int", 7], 7),
        ("typing_extensions.cast", ["int", 7], 7),
    ],
)
def test_pure_functions_answer_as_python(name, args, expected):
    assert stdlib.call(name, args, {}) == expected


@pytest.mark.parametrize(
    ("name", "args", "kwargs"),
    [
        ("os.path.join", ["a", External("x")], {}),  # not all strings: not this rule
        ("math.gcd", [True, 4], {}),  # a bool is not taken for a number
        ("math.gcd", ["4", 2], {}),
        ("typing.cast", [7], {}),  # cast takes two arguments
        ("typing.get_args", [External("typing.List[int]")], {}),  # not a Literal
        ("typing.get_args", [], {}),
        ("functools.cache", [], {}),
        ("functools.lru_cache()", [1, 2], {}),
        ("os.getenv", ["VLLM_X"], {}),  # a fact about the machine: not the library's
        ("math.pi", [], {}),
    ],
)
def test_calls_outside_a_rule_are_left_to_the_machine(name, args, kwargs):
    assert stdlib.call(name, args, kwargs) is MISSING


def test_a_result_too_large_to_keep_is_not_an_answer():
    big = 2**5000
    assert stdlib.call("math.lcm", [big, 3], {}) is MISSING
    assert stdlib.call("math.lcm", [2**4000, 3], {}) == math.lcm(2**4000, 3)
    assert stdlib.call("math.lcm", [2**4095, 1], {}) == 2**4095  # 4096 bits: kept


def test_a_math_error_is_the_error_python_raises():
    with pytest.raises(Raised) as raised:
        stdlib.call("math.sqrt", [-1], {})
    assert raised.value.kind == "ValueError"
    with pytest.raises(Raised) as raised:
        stdlib.call("math.ceil", [float("inf")], {})
    assert raised.value.kind == "OverflowError"


def test_enum_auto_and_lru_cache_are_named_values():
    assert stdlib.call("enum.auto", [], {}) == External("enum.auto()")
    assert stdlib.call("functools.lru_cache", [], {"maxsize": 4}) == External(
        "functools.lru_cache()"
    )
    assert stdlib.call("functools.cache", [3], {}) == External("functools.cache()")
    assert stdlib.call("functools.lru_cache()", [5], {}) == 5


def test_literal_keeps_its_items_and_other_subscripts_are_named():
    literal = stdlib.subscript(External("typing.Literal"), ("auto", "fp8"))
    assert isinstance(literal, stdlib.LiteralType) and literal.items == ("auto", "fp8")
    assert stdlib.call("typing.get_args", [literal], {}) == ("auto", "fp8")
    one = stdlib.subscript(External("typing_extensions.Literal"), "auto")
    assert isinstance(one, stdlib.LiteralType) and one.items == ("auto",)
    named = stdlib.subscript(External("typing.Dict"), (External("builtins.str"), 3))
    assert named == External("typing.Dict[builtins.str, 3]")


def test_decorators_give_their_kind(tmp_path):
    body = (
        "@functools.cache\ndef cached(cls):\n    return 1\n\n"
        "@abc.abstractmethod\ndef abstract(cls):\n    return 2\n\n"
        "@functools.cached_property\ndef prop(self):\n    return 3\n\n"
        "@unknown_decorator\ndef opaque(cls):\n    return 4\n\n" + cm("plain", "return 5")
    )
    header = "import abc\nimport functools\n"
    it, cls = load(tmp_path, body, header=header)
    got = {n: it.class_own_attr(cls, n) for n in ("cached", "abstract", "prop", "opaque", "plain")}
    assert {n: (f.kind, f.cached) for n, f in got.items()} == {
        "cached": ("function", True),
        "abstract": ("function", False),
        "prop": ("property", False),
        "opaque": ("opaque", False),
        "plain": ("classmethod", False),
    }


def test_label_names_a_value():
    assert stdlib.label(External("torch.float16")) == "torch.float16"
    assert stdlib.label(3) == "3"
    assert stdlib.label("x") == "'x'"


def test_get_args_takes_one_argument():
    """``get_args(Literal[...])`` gives its items; with another argument too CPython
    raises TypeError, which is not answered from the first one (unknown)."""
    literal = stdlib.subscript(External("typing.Literal"), ("a", "b"))
    assert stdlib.call("typing.get_args", [literal], {}) == ("a", "b")
    assert stdlib.call("typing.get_args", [literal, External("x")], {}) is MISSING
    assert stdlib.call("typing.get_args", [], {}) is MISSING
    assert stdlib.call("typing.get_args", [External("x")], {}) is MISSING


def test_more_decorators_give_their_kind(tmp_path):
    """An outside decorator that is not known to keep the function is opaque; a
    tree function named ``cache``/``lru_cache`` caches; a tree decorator wraps."""
    body = (
        "@torch.no_grad()\ndef outside(cls):\n    return 1\n\n"
        "@cache\ndef own_cache(cls):\n    return 2\n\n"
        "@wrap\ndef wrapped(cls):\n    return 3\n\n"
        "@wrap(1)\ndef called(cls):\n    return 4\n\n"
        "@functools.lru_cache\ndef lru(cls):\n    return 6\n\n" + cm("plain", "return 5")
    )
    header = "import functools\nimport torch\n\n"
    header += "def cache(f):\n    return f\n\ndef wrap(f):\n    return f\n"
    it, cls = load(tmp_path, body, header=header)
    names = ("outside", "own_cache", "wrapped", "called", "lru")
    got = {n: it.class_own_attr(cls, n) for n in names}
    assert {n: (f.kind, f.cached, len(f.wrappers)) for n, f in got.items()} == {
        "outside": ("opaque", False, 0),
        "own_cache": ("function", True, 0),
        "wrapped": ("function", False, 1),
        "called": ("opaque", False, 0),
        "lru": ("function", True, 0),
    }
    assert stdlib.label(cls) == "MyBackend"


REGEX = "import re\n"


@pytest.mark.parametrize(
    "body",
    [
        "m = re.match('a(b)?(c)?', 'abx')\nreturn m.group(0), m.groups(), m.span(), m.start(1)",
        "m = re.search('(?P<n>b+)', 'abbc')\nreturn m.end(), m.groupdict(), m.group('n')",
        "return re.fullmatch('ab', 'abc'), re.match('b', 'ab') is None",
        "return re.match('a', 'a').group(5)",
        "return re.match('a', 'a').span(1, 2)",
        "return re.match('(', 'a')",
        # named as this Python names it (3.13: PatternError), caught as an Exception
        "try:\n    return re.match('(', 'a')\nexcept Exception:\n    return 1",
        "try:\n    return re.match('(', 'a')\nexcept ValueError:\n    return 1",
    ],
)
def test_regex_calls_answer_as_python(tmp_path, body):
    as_python(tmp_path, REGEX, body)


@pytest.mark.parametrize(
    "call",
    [
        ("re.match", ["a", "a" * (stdlib.MAX_MATCHED + 1)], {}),
        ("re.match", ["a", "a", 2], {}),
        ("re.match", ["a", "a"], {"flags": 2}),
        ("re.match", ["a", External("x")], {}),
        ("re.split", ["a", "a"], {}),
        ("os.match", ["a", "a"], {}),
    ],
)
def test_regex_calls_outside_the_rule_are_not_answered(call):
    assert stdlib.regex_call(*call) is MISSING


def test_a_match_has_only_its_methods():
    import re

    match = stdlib.MatchResult(re.match("a", "a" * stdlib.MAX_MATCHED))
    assert match.attr("string") is None and match.attr("group") is not None
    assert stdlib.regex_call("re.match", ["a+", "a" * stdlib.MAX_MATCHED], {}).match.end() == 200


def test_a_tree_function_given_to_cache_is_itself():
    """``functools.cache(f)`` of a tree function is that function (memoised by the
    evaluator's own call memo); of anything else an outside value."""
    from sphinxext_attn.pyeval.values import PyFunction

    func = PyFunction("f", None, None, None)  # type: ignore[arg-type]
    assert stdlib.call("functools.cache", [func], {}) is func
    assert stdlib.call("functools.lru_cache", [func], {}) is func
    assert stdlib.call("functools.cache", [func], {"typed": True}) is MISSING
