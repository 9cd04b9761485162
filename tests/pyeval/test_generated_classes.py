"""The evaluator against CPython on generated class code (this test's own text, never
analysed code): small hierarchies with single and multiple inheritance (so the MRO
decides), class attributes overridden along it, methods, classmethods,
staticmethods and properties (some calling ``super()``), ``__init__`` setting fields,
decorators, class keywords, module-level attribute settings, then one expression
asking something of them (an attribute, a call, ``getattr``/``hasattr``/
``isinstance``/``issubclass``). Each answer must be CPython's value (same types),
CPython's exception class, or an explicit unknown; anything else fails with the
program. A generated prelude CPython itself refuses (an inconsistent MRO, a class
keyword nothing accepts) is not a case."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from evaluator import our_answer, python_answer, same_answer
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

#: Module-level helpers every generated prelude starts with.
HEAD = (
    "import abc\n"
    "import functools\n"
    "import typing\n"
    "\n"
    "def deco(f):\n"
    "    return f\n"
    "\n"
    "def wraps_deco(f):\n"
    "    @functools.wraps(f)\n"
    "    def inner(*args, **kwargs):\n"
    "        return f(*args, **kwargs)\n"
    "    return inner\n"
    "\n"
    "def cdeco(c):\n"
    "    return c\n"
    "\n"
)

K = st.sampled_from(["0", "1", "2", "3", "-4", "10"])

#: Bodies of ``def m(self)``: what an instance method returns.
METHOD_BODIES = [
    "return self.x",
    "return self.x + {k}",
    "return super().m() + {k}",
    "return super().m() * 2",
    "return {k}",
    "return self.c() - {k}",
    "return self.s({k})",
    "return self.p",
    "return type(self).__name__",
    "return self.f",
    "return getattr(self, 'f', {k})",
    "return hasattr(self, 'y')",
]
#: Bodies of ``@classmethod def c(cls)``.
CLASSMETHOD_BODIES = [
    "return cls.x",
    "return cls.x * {k}",
    "return super().c() + {k}",
    "return cls.__name__",
    "return {k}",
    "return cls.s({k})",
    "return cls().m()",
    "return getattr(cls, 'y', {k})",
]
#: Bodies of ``@property def p(self)``.
PROPERTY_BODIES = [
    "return self.x * {k}",
    "return super().p + {k}",
    "return {k}",
    "return self.m()",
]
#: Bodies of ``def __init__(self, v=...)``.
INIT_BODIES = [
    "self.f = v",
    "super().__init__()\n        self.f = v + {k}",
    "self.f = v\n        self.x = v * 2",
    "self.f = self.x + v",
]


def _fill(template: str, k: str) -> str:
    return template.replace("{k}", k)


@st.composite
def member(draw: st.DrawFn) -> str:
    """One member of a class body, as lines indented by four."""
    kind = draw(st.sampled_from(["x", "y", "m", "c", "s", "p", "init", "init"]))
    k = draw(K)
    if kind == "x":
        return f"    x = {k}\n"
    if kind == "y":
        return f"    y = {draw(st.sampled_from(['None', repr('a'), k, '(1, 2)']))}\n"
    if kind == "m":
        deco = draw(st.sampled_from(["", "    @deco\n", "    @wraps_deco\n"]))
        body = _fill(draw(st.sampled_from(METHOD_BODIES)), k)
        return f"{deco}    def m(self):\n        {body}\n"
    if kind == "c":
        deco = draw(st.sampled_from(["", "    @deco\n"]))
        body = _fill(draw(st.sampled_from(CLASSMETHOD_BODIES)), k)
        return f"    @classmethod\n{deco}    def c(cls):\n        {body}\n"
    if kind == "s":
        return f"    @staticmethod\n    def s(v=0):\n        return v + {k}\n"
    if kind == "p":
        body = _fill(draw(st.sampled_from(PROPERTY_BODIES)), k)
        return f"    @property\n    def p(self):\n        {body}\n"
    body = _fill(draw(st.sampled_from(INIT_BODIES)), k)
    return f"    def __init__(self, v={k}):\n        {body}\n"


@st.composite
def hierarchy(draw: st.DrawFn) -> tuple[str, int]:
    """A prelude defining classes K0..Kn-1 (each on some of the earlier ones), and n."""
    n = draw(st.integers(1, 4))
    text = HEAD
    for i in range(n):
        earlier = [f"K{j}" for j in range(i)]
        bases = draw(st.lists(st.sampled_from(earlier), unique=True, max_size=2)) if i else []
        keyword = draw(st.sampled_from(["", "", "", "metaclass=abc.ABCMeta", "metaclass=type"]))
        head = ", ".join([*bases, *([keyword] if keyword else [])])
        decorator = draw(st.sampled_from(["", "", "", "@typing.final\n", "@cdeco\n"]))
        body = "".join(draw(st.lists(member(), max_size=4))) or "    pass\n"
        text += f"{decorator}class K{i}({head}):\n{body}\n"
        if draw(st.integers(0, 5)) == 0:
            text += f"K{i}.x = {draw(K)}\n"
    return text, n


QUERIES = [
    "{A}.x",
    "{A}().x",
    "{A}.y",
    "{A}.c()",
    "{A}().c()",
    "{A}.s()",
    "{A}().s(5)",
    "{A}().m()",
    "{A}().p",
    "{A}().f",
    "{A}(7).f",
    "{A}(v=7).f",
    "{A}(1, 2)",
    "{A}.m({B}())",
    "{A}.zz",
    "{A}().zz",
    "{A}.__name__",
    "getattr({A}, 'x', 'no')",
    "getattr({A}(), 'f', 'no')",
    "hasattr({A}, 'c')",
    "hasattr({A}(), 'f')",
    "hasattr({A}, 'f')",
    "isinstance({A}(), {B})",
    "isinstance({A}(), ({B}, int))",
    "issubclass({A}, {B})",
    "{A}() == {A}()",
    "{A}() is {A}()",
    "type({A}()) is {B}",
    "{A}.s is {B}.s",
    "{A}.x == {B}.x",
    "[k.x for k in ({A}, {B})]",
]


@st.composite
def program(draw: st.DrawFn) -> tuple[str, str]:
    prelude, n = draw(hierarchy())
    names = st.sampled_from([f"K{i}" for i in range(n)])
    query = draw(st.sampled_from(QUERIES))
    return prelude, query.replace("{A}", draw(names)).replace("{B}", draw(names))


def _typed(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_typed(v) for v in value])
    if isinstance(value, (str, int, float, bool, type(None))):
        return (type(value).__name__, value)
    return ("other", type(value).__name__)  # an object: never equal to ours


def accepted(prelude: str) -> bool:
    """Whether CPython runs the prelude (the generator may write an inconsistent MRO;
    a module that fails to import asks nothing)."""
    try:
        code = compile(prelude, "<generated>", "exec", dont_inherit=True)
        exec(code, {"__name__": "generated"})  # this test's own code
    except Exception:
        return False
    return True


def answers(root: Path, prelude: str, expr: str) -> tuple[tuple[str, Any], tuple[str, Any]]:
    body = f"return {expr}"
    return our_answer(root, prelude, [body]), python_answer(prelude, body)


def agrees(ours: tuple[str, Any], python: tuple[str, Any]) -> bool:
    if ours[0] == "unknown":
        return True  # an explicit unknown is never wrong
    return same_answer(ours, python, _typed)


GENERATED = settings(
    derandomize=True,
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@GENERATED
@given(case=program())
@example(
    case=(
        HEAD + "class K0:\n    x = 1\n\nclass K1(K0):\n    x = 2\n\n"
        "class K2(K0):\n    x = 3\n\nclass K3(K1, K2):\n    pass\n",
        "K3.x",
    )
)
def test_generated_class_code(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[str, str]
) -> None:
    prelude, expr = case
    assume(accepted(prelude))
    ours, python = answers(tmp_path_factory.mktemp("cls"), prelude, expr)
    assert agrees(ours, python), (
        f"{expr!r} after\n{prelude}\nevaluator {ours!r}, Python {python!r}"
    )


# -- records (dataclasses, named tuples), enums and exceptions --------------------------
RECORD_HEAD = (
    "import dataclasses\n"
    "import enum\n"
    "import typing\n"
    "from dataclasses import dataclass\n"
    "from typing import ClassVar, NamedTuple\n"
    "\n"
)


@st.composite
def record(draw: st.DrawFn) -> str:
    """``R``: a dataclass or named tuple of up to three fields (defaults last)."""
    kind = draw(
        st.sampled_from(
            [
                "@dataclass",
                "@dataclass(eq=False)",
                "@dataclasses.dataclass()",
                "NamedTuple",
                "@dataclass(frozen=True)",
            ]
        )
    )
    n = draw(st.integers(0, 3))
    defaults = draw(st.integers(0, n))
    lines = []
    for i, name in enumerate("abc"[:n]):
        default = f" = {draw(K)}" if i >= n - defaults else ""
        lines.append(f"    {name}: int{default}\n")
    if draw(st.booleans()):
        lines.append("    k: ClassVar[int] = 5\n")
    if draw(st.booleans()):
        lines.append(
            "    def total(self):\n        return sum([self.k, *[getattr(self, n) "
            "for n in ('a', 'b', 'c') if hasattr(self, n)]])\n"
        )
    if kind.startswith("@") and draw(st.booleans()):
        lines.append("    def __post_init__(self):\n        self.extra = 2\n")
    # an own ``__init__`` setting exactly the fields (``in`` compares what an instance
    # holds, where CPython's ``__eq__`` reads the declared fields)
    if kind.startswith("@") and n == 1 and draw(st.integers(0, 2)) == 0:
        lines.append("    def __init__(self, a=9):\n        self.a = a\n")
    body = "".join(lines) or "    pass\n"
    if kind == "NamedTuple":
        return f"class R(NamedTuple):\n{body}\n"
    sub = draw(st.sampled_from(["", "class S(R):\n    d: int = 4\n\n"]))
    return f"{kind}\nclass R:\n{body}\n{sub}"


RECORD_QUERIES = [
    "R().a",
    "R(1).a",
    "R(1, 2).b",
    "R(1, 2, 3).c",
    "R(1, 2, 3, 4)",
    "R(b=1).b",
    "R(zz=1)",
    "R(1) == R(1)",
    "R(1) != R(2)",
    "R(1, 2)[1]",
    "R(1)[0]",
    "R(1).total()",
    "R(2).extra",
    "R(1, 2) == (1, 2)",
    "len(R(1, 2))",
    "R.k",
    "R(1).k",
    "S().d",
    "S(1).a",
    "S(1, 2, 3, 4).d",
    "R(1)._asdict()",
    "R(1).a is R(1).a",
    "[x for x in R(1, 2)]",
    "R(1) is R(1)",
    "R(1) in [R(1)]",
]

ENUM_SOURCES = [
    "class E(enum.Enum):\n    A = 1\n    B = 'x'\n    _C = 3\n",
    "class E(enum.IntEnum):\n    A = 1\n    B = 2\n",
    "class E(str, enum.Enum):\n    A = 'a'\n    B = 'b'\n",
    "class E(enum.Enum):\n    A = 1\n    B = 1\n",
]
ENUM_QUERIES = [
    "E(1).name",
    "E(3).name",
    "E(4)",
    "E('x') is E.B",
    "E(E.A).value",
    "E['A'].value",
    "E['Z']",
    "[m.name for m in E]",
    "E.A.zz",
    "E('a').name",
    "E(2) == 2",
    "E.B.value",
    "E()",
    "E.A == E.A",
    "E.A is E(1)",
    "E.B is E.A",
    "E.B.name",
    "E['B'].name",
    "E(1, 2)",
]

EXCEPTION_SOURCES = [
    "class Err(ValueError):\n    pass\n",
    "class Err(Exception):\n    code = 3\n",
    "class Base(RuntimeError):\n    pass\n\nclass Err(Base):\n    pass\n",
    "class Err(list):\n    pass\n",
    "class Err(typing.Generic[typing.TypeVar('T')]):\n    x = 1\n",
]
EXCEPTION_QUERIES = [
    "isinstance(Err('a'), ValueError)",
    "isinstance(Err(), Exception)",
    "Err().x",
    "Err.code",
    "isinstance(Err(1, 2), Err)",
    "issubclass(Err, Exception)",
    "len(Err())",
]


@st.composite
def records_program(draw: st.DrawFn) -> tuple[str, str]:
    kind = draw(st.sampled_from(["record", "record", "enum", "exception"]))
    if kind == "record":
        return RECORD_HEAD + draw(record()), draw(st.sampled_from(RECORD_QUERIES))
    if kind == "enum":
        source = draw(st.sampled_from(ENUM_SOURCES))
        return RECORD_HEAD + source, draw(st.sampled_from(ENUM_QUERIES))
    source = draw(st.sampled_from(EXCEPTION_SOURCES))
    return RECORD_HEAD + source, draw(st.sampled_from(EXCEPTION_QUERIES))


@GENERATED
@given(case=records_program())
def test_generated_records_enums_and_exceptions(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[str, str]
) -> None:
    prelude, expr = case
    assume(accepted(prelude))
    ours, python = answers(tmp_path_factory.mktemp("rec"), prelude, expr)
    assert agrees(ours, python), (
        f"{expr!r} after\n{prelude}\nevaluator {ours!r}, Python {python!r}"
    )
