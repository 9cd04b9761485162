"""Edges of attribute access, truth, comparison, item assignment and iteration of
evaluated values (pyeval/objects, members, methods, fields, attrsets), each answered as
CPython answers (checked against it here) or unknown for its exact reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from evaluator import our_answer, python_answer

from sphinxext_attn.pyeval import World, member_names
from sphinxext_attn.pyeval.scope import MISSING
from sphinxext_attn.pyeval.values import External

NT = "from typing import NamedTuple\nclass P(NamedTuple):\n    a: int = 1\n"
PROP = (
    "class A:\n    @property\n    def p(self):\n        return 1\n\n"
    "class B(A):\n    @property\n    def p(self):\n        return super().p + 1\n"
)

#: (prelude, body lines): CPython's answer, and the evaluator's the same
AS_PYTHON = [
    (NT, ["return 1 if P() else 2"]),
    ("class K:\n    pass\n", ["return 1 if K() else 2"]),
    ("import enum\nclass E(enum.Enum):\n    A = 1\n", ["return f'{E.A!r}'"]),
    ("def f():\n    return 1\n", ["return f.__name__"]),
    ("", ["return None.x"]),
    (PROP, ["return B().p"]),  # a property through super() runs on the instance
    ("", ["class L:", "    pass", "L.x = 3", "return L.x"]),  # a class just made
    ("", ["xs = [1]", "xs[5] = 2"]),
    ("", ["xs = [1]", "xs[0:0] = [7, 8]", "return xs"]),
    (NT, ["return bool(P()), list(P(4)), [x for x in P(5)]"]),
    ("class K:\n    def __bool__(self):\n        return False\n", ["return bool(K())"]),
    ("class K:\n    def __len__(self):\n        return 0\n", ["return bool(K()), not K()"]),
    ("class K:\n    def m(self):\n        return 1\n", ["return bool(K().m), bool(K)"]),
    (
        "class A:\n    def __eq__(self, o):\n        return NotImplemented\n",
        ["a = A()", "return A() == A(), a == a, a != A()"],
    ),
    ("", ["return 'ab'.replace(1, 'x')"]),
    ("", ["return 'ab'.replace('a', 'x', 'y')"]),
    ("class K:\n    if True:\n        def m(self):\n            return 1\n", ["return K().m()"]),
    (
        "import enum\nclass E(enum.Enum):\n    A: int = 1\n    B = 2\n",
        ["return [m.name for m in E]"],
    ),
    (
        "import enum\nclass E(enum.Enum):\n    X = 1\n    if True:\n        Y = 2\n",
        ["return E.Y.value"],
    ),
    (
        "import abc\nclass K(abc.ABC):\n    def __init__(self):\n        self.a = 1\n",
        ["return K().a"],
    ),
    ("class K:\n    x = 1\n\nK.y = 2\nprint(K.x, [K.y])\n", ["return K.x, K.y"]),  # reads only
    (
        "class K:\n    x = 1\n    @classmethod\n    def f(cls):\n        return [cls]\n\n"
        "K.f().pop()\n",
        ["return K.x"],
    ),
    ("class K:\n    x = 1\n\nif True:\n    def g():\n        K.x = 9\n", ["return K.x"]),
    ("class K:\n    x = 1\n\nsetattr(K, 'y', 4)\n", ["return K.x"]),  # another attribute
]

#: (prelude, body lines, the evaluator's unknown reason)
UNKNOWN = [
    (
        "class K:\n    x = 1\n    @staticmethod\n    def s(v):\n        return super().x\n",
        ["return K.s(3)"],
        "super() on an unknown object",
    ),
    (
        "import enum\nclass E(enum.Enum):\n    A = (1, 2)\n",
        ["return f'{E.A!r}'"],
        "repr of E.A not evaluated",
    ),
    ("", ["return 1 if range(0) else 2"], "truth of range not evaluated"),
    ("class K:\n    x = 1\n", ["return super(K, 3).x"], "super with arguments() not evaluated"),
    (
        "import re\n",
        ["return re.match('a', 'a').zz"],
        "attribute zz of MatchResult not evaluated",
    ),
    ("", ["t = (1, 2)", "t[0] = 5"], "item assignment not evaluated"),
    ("", ["return bool(os.path)"], "truth of os.path (outside the tree)"),
    ("", ["return {[1]}"], "set of unhashable values"),
    ("", ["return [0 for _ in range(10 ** 9)]"], "range too long to evaluate"),
    (
        "class K(os.getcwd()):\n    x = 1\n",
        ["return K.y"],
        "K has a base class that could not be resolved",
    ),
    (
        "class B:\n    pass\n\nclass K(B, os.getcwd()):\n    x = 1\n",
        ["return K.y"],
        "K has a base class that could not be resolved",
    ),
    (
        "class K:\n    class a:\n        b = [1]\n\nK.a.b.append(2)\n",
        ["return K.a.b"],
        "K attribute set by module-level code not evaluated",
    ),
    # a call at import the class is passed to may set any attribute of it
    (
        "class K:\n    x = 1\n\ndef register(c):\n    c.x = 5\n\nregister(K)\n",
        ["return K.x"],
        "K attribute set by module-level code not evaluated",
    ),
    (
        "class K:\n    x = 1\n\nsetattr(dict(a=K)['a'], 'x', 4)\n",
        ["return K.x"],
        "K attribute set by module-level code not evaluated",
    ),
    (
        "class K:\n    x = 1\n\nsetattr(K, 'x', 4)\n",
        ["return K.x"],
        "K attribute set by module-level code not evaluated",
    ),
]

#: the evaluator's own answer where CPython's differs for a reason of the test's
#: making (the module's name, a name only the evaluator's header imports)
OURS = [
    (
        "class K:\n    pass\n",
        ["return K.__module__"],
        ("ok", "vllm.v1.attention.backends.my_attn"),
    ),
    ("", ["return os.path is os.path, os.path is os.sep"], ("ok", (True, False))),
    # a base that is not resolved is no reason to give up on what the class itself binds
    ("class K(os.getcwd()):\n    x = 1\n", ["return K.x"], ("ok", 1)),
    # a base whose own base raises raises again when asked again (its MRO is not kept)
    (
        "class A(1 // 0):\n    pass\n\nclass K(A):\n    x = 1\n",
        ["try:", "    K.x", "except ZeroDivisionError:", "    pass", "return K.x"],
        ("raise", "ZeroDivisionError"),
    ),
    # an inconsistent MRO: CPython refuses the class statement, and so does every
    # question about the class
    (
        "class A:\n    x = 1\nclass B(A):\n    x = 2\nclass C(A, B):\n    pass\n",
        ["return C.x"],
        ("raise", "TypeError"),
    ),
]


def _typed(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return (type(value).__name__, [_typed(v) for v in value])
    return (type(value).__name__, value)


@pytest.mark.parametrize(("prelude", "lines"), AS_PYTHON)
def test_answers_as_python(tmp_path: Path, prelude: str, lines: list[str]) -> None:
    ours, python = our_answer(tmp_path, prelude, lines), python_answer(prelude, "\n".join(lines))
    assert ours[0] == python[0], (ours, python)
    assert _typed(ours[1]) == _typed(python[1]) if ours[0] == "ok" else ours[1] == python[1]


@pytest.mark.parametrize(("prelude", "lines", "reason"), UNKNOWN)
def test_unknown_for_its_reason(
    tmp_path: Path, prelude: str, lines: list[str], reason: str
) -> None:
    kind, why = our_answer(tmp_path, prelude, lines)
    assert kind == "unknown", why
    assert str(why).rsplit(" (", 1)[0] == reason


@pytest.mark.parametrize(("prelude", "lines", "expected"), OURS)
def test_own_answers(tmp_path: Path, prelude: str, lines: list[str], expected: Any) -> None:
    assert our_answer(tmp_path, prelude, lines) == expected


def test_plain_world_answers_nothing_about_outside_names() -> None:
    """The plain World compares nothing outside the tree itself and holds no foreign
    attribute; a module import_module cannot find is unknown (MISSING)."""
    world = World()
    assert world.compare(None, None, External("x.y"), 1) is None  # type: ignore[arg-type]
    assert world.foreign_attr(None, object(), "a", "") is MISSING  # type: ignore[arg-type]


def test_member_names_of_a_plain_class_are_its_public_assignments(tmp_path: Path) -> None:
    from evaluator import load

    body = "x = 1\n_y = 2\nz: int = 3\nw: int\n(a, b) = (1, 2)\n"
    _it, cls = load(tmp_path, body)
    assert member_names(cls) == ["x", "z"]
    assert member_names(cls, enum=True) == ["x", "_y", "z"]  # ``_y`` is an enum member


def test_every_safe_method_is_a_method_of_its_type() -> None:
    """methods._method takes each listed name for a bound method of its type."""
    from sphinxext_attn.pyeval.methods import SAFE_METHODS

    assert all(callable(getattr(k, n, None)) for k, names in SAFE_METHODS.items() for n in names)


def test_record_fields_of_a_plain_class_are_none(tmp_path: Path) -> None:
    from evaluator import load

    it, cls = load(tmp_path, "x: int = 1\n")
    assert it.dataclass_fields(cls) is None


def test_a_global_rebound_from_a_machine_fact_keeps_the_fact(tmp_path: Path) -> None:
    """``global _g; _g = probe()``: whoever reads ``_g`` later read the probe too
    (members.rebind_global notes the facts the rebinding call read)."""
    from evaluator import HEADER, MODULE, cm
    from runtime_trees import runtime_backend

    from sphinxext_attn.knowledge.machine import Machine
    from sphinxext_attn.model.environment import Environment
    from sphinxext_attn.pyeval import Interpreter
    from sphinxext_attn.pyeval.values import NODE
    from sphinxext_attn.source.tree import SourceTree

    header = HEADER + (
        "import torch\n_g = None\n\ndef probe():\n    global _g\n"
        "    _g = torch.cpu._is_amx_tile_supported()\n\n"
        "def plain():\n    global _g\n    _g = 2\n\n"
    )
    body = cm("a", "probe()", "return 1") + cm("b", "plain()", "return 1") + cm("c", "return _g")
    runtime_backend(tmp_path, body, header=header)
    it = Interpreter(SourceTree(tmp_path), Machine(Environment(platform="xpu")))
    cls = it.module_attr(it.module(MODULE), "MyBackend", NODE)

    def ask(name: str) -> tuple[Any, list[tuple[str, str]]]:
        it.capability_read = 0
        value = it.call(it.getattr(cls, name, NODE, ""), [], {}, NODE, "")
        return value, it.facts_of(it.capability_read)

    probe = ("torch.cpu._is_amx_tile_supported", "false")
    assert ask("a") == (1, [probe])
    assert ask("c") == (False, [probe])
    assert ask("b") == (1, [])
    assert ask("c") == (2, [])  # rebound from nothing read: the fact is dropped


# -- the abstract head size stored on a class (its ``==`` is never asked for) --------
@pytest.mark.parametrize(
    "lines",
    [
        ["cls.hs = head_size", "return cls.hs > 8"],  # a class attribute
        ["cls.hs = head_size", "return cls().hs > 8"],  # read through an instance
        ["cls.hs = head_size", "return super(cls, cls).get_hs() > 8"],
        ["AttentionBackend.hs = head_size", "return super().hs > 8"],  # a base's
        [
            "import enum",
            "class E(enum.Enum):",
            "    A = 1",
            "E.hs = head_size",
            "return E.A.hs > 8",
        ],
    ],
)
def test_a_head_size_set_on_a_class_is_read_back_as_itself(
    tmp_path: Path, lines: list[str]
) -> None:
    from head_size_items import backend as _backend
    from head_size_items import head_size_method as _method

    from sphinxext_attn.runtime.head_sizes import head_size_answer
    from sphinxext_attn.runtime.questions import Asker

    body = _method("\n".join(lines)) + "\n@classmethod\ndef get_hs(cls):\n    return cls.hs\n"
    it, cls = _backend(tmp_path, body)
    answer = head_size_answer(Asker(it, cls))
    if "super(cls" in lines[-1]:  # super() with arguments is not evaluated
        assert answer.unknown is not None and "super" in answer.unknown.reason
        return
    assert answer.unknown is None, answer.unknown
    from head_size_items import SIZES, expand

    assert expand(answer.value, SIZES) == {h for h in SIZES if h > 8}


def test_a_head_size_in_a_set_is_unknown_at_its_place(tmp_path: Path) -> None:
    from head_size_items import backend as _backend
    from head_size_items import head_size_method as _method

    from sphinxext_attn.runtime.head_sizes import head_size_answer
    from sphinxext_attn.runtime.questions import Asker

    it, cls = _backend(tmp_path, _method("x = 1\nreturn {head_size} == {64}"))
    unknown = head_size_answer(Asker(it, cls)).unknown
    assert unknown is not None and unknown.reason == "a head size used as a key is not evaluated"
    assert unknown.path.endswith("my_attn.py") and unknown.line > 0
