"""What a module's own code binds, and which module-level code changes a value
after binding it: each answer is Python's, or unknown with the exact reason and
the line of the statement the evaluator did not evaluate."""

# ruff: noqa: E501  (cases read best one per line)

from __future__ import annotations

import re
from pathlib import Path

import pytest
from evaluator import FILE, HEADER, MODULE, ask, cm, load, our_answer, python_answer

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter, LimitExceeded, Raised, Unknown

#: (module-level code, the name read): Python binds it; the evaluator does not
#: evaluate the statement that binds it last
NOT_EVALUATED = [
    ("a, *rest = [1, 2, 3]", "rest"),
    ("for v in range(2):\n    def fn():\n        return 1", "fn"),
    ("for v in range(2):\n    class C:\n        pass", "C"),
    ("for v in range(2):\n    f = (lambda: v)", "f"),
    (
        "err = 5\nfor v in range(1):\n    try:\n        pass\n    except ValueError as err:\n        pass",
        "err",
    ),
    ("for v in range(1):\n    import os as osm", "osm"),
    ("match [1, 2, 3]:\n    case [first, *others]:\n        pass", "others"),
    ("match [1, 2, 3]:\n    case [first, *others]:\n        pass", "first"),
    ("match {'k': 1, 'j': 2}:\n    case {'k': 1, **extra}:\n        pass", "extra"),
    ("if (n := 3) > 1:\n    pass", "n"),
    ("x, y = 1, 2, 3", "y"),
    ("x, y = 5", "y"),
    (
        "class CM:\n    def __enter__(self):\n        return 1\n    def __exit__(self, *a):\n        pass\nwith CM() as c:\n    pass",
        "c",
    ),
]


def reason(unknown: str) -> str:
    return re.sub(r" \([^()]*\.py(:\d+)?\)$", "", unknown)


@pytest.mark.parametrize(("prelude", "name"), NOT_EVALUATED)
def test_a_binding_not_evaluated_is_unknown(tmp_path: Path, prelude: str, name: str) -> None:
    ours = our_answer(tmp_path, prelude + "\n", [f"return {name}"])
    assert ours[0] == "unknown" and reason(ours[1]) == f"binding of {name} not evaluated", ours


#: (module-level code, body): the evaluator answers as Python
SAME = [
    ("a = 1; b = 2", "return a"),
    ("x = y = [4]", "return x"),
    ("import os, sys", "return sys is not None"),
    (
        "class CM:\n    def __enter__(self):\n        return 1\n    def __exit__(self, *a):\n        pass\nwith CM():\n    w = 2",
        "return w",
    ),
    ("X = []\nf = (lambda: 0, lambda: X.append(1))", "return X"),
    ("X = []\ndef add():\n    X.append(1)\nf = (lambda: 0, lambda: add())", "return X"),
    # a name bound earlier and again by a piece's second target or statement: the
    # later value (chunk_names indexed only the first name, which answered 0)
    ("y = 0\nx = y = 1", "return y"),
    ("b = 0\na = 1; b = 2", "return b"),
    ("b = 0\nprint(); b = 2", "return b"),
    ("x = 0\nf = lambda x=1: x\nx = 3", "return (x, f())"),
]


@pytest.mark.parametrize(("prelude", "body"), SAME)
def test_answers_as_python(tmp_path: Path, prelude: str, body: str) -> None:
    python = python_answer(prelude + "\n", body)
    assert python[0] == "ok"
    assert our_answer(tmp_path, prelude + "\n", body.split("\n")) == python


#: (module-level code, the line that changes X, Python's answer for ``return X``)
CHANGED = [
    ("X = []\n@(lambda *a: (lambda c: c))(X)\nclass C:\n    pass", "@(lambda", []),
    ("X = []\nclass C(dict if X.append(1) else object):\n    pass", "class C(", [1]),
    ("X = []\nclass C:\n    X.append(1)", "    X.append", [1]),
    ("X = []\nf = (X.append(1), lambda: 0)", "f = (X", [1]),
    ("X = []\ndef reg(v):\n    pass\nreg(X)", "reg(X)", []),
    ("X = []\ndef setx():\n    global X\n    X = [2]\nsetx()", "setx()", [2]),
    ("X = []\ndef add():\n    X.append(1)\nclass C:\n    add()", "    add()", [1]),
    ("X = []\ndef add():\n    X.append(1)\nf = (add(), lambda: 0)", "f = (add", [1]),
    ("X = 1\ndef setx():\n    global X\n    X = 2\nsetx()", "setx()", 2),
]


@pytest.mark.parametrize(("prelude", "marker", "value"), CHANGED)
def test_a_value_changed_at_import_is_unknown_at_that_line(
    tmp_path: Path, prelude: str, marker: str, value: object
) -> None:
    assert python_answer(prelude + "\n", "return X") == ("ok", value)
    ours = our_answer(tmp_path, prelude + "\n", ["return X"])
    lines = (tmp_path / FILE).read_text().split("\n")
    line = next(i for i, text in enumerate(lines, 1) if text.startswith(marker))
    assert ours == ("unknown", f"X is changed by module-level code, not evaluated ({FILE}:{line})")


@pytest.mark.parametrize(
    "prelude", ["X = []\nX.append(1)\n", "X = 1\ndef setx():\n    global X\n    X = 2\nsetx()\n"]
)
def test_a_changed_value_is_unknown_each_time_it_is_read(tmp_path: Path, prelude: str) -> None:
    it, cls = load(tmp_path, cm("f", "return X") + cm("g", "return len(X)"), header=prelude)
    for name in ("f", "g"):
        ours = our_answer(tmp_path / name, prelude, ["return X"])
        assert ours[0] == "unknown", ours
        with pytest.raises(Unknown, match="changed by module-level code"):
            ask(it, cls, name)


def test_a_name_defined_in_terms_of_itself_is_a_cycle(tmp_path: Path) -> None:
    it, cls = load(tmp_path, cm("f", "return X"), header="X = X + 1\n")
    with pytest.raises(LimitExceeded) as caught:
        ask(it, cls, "f")
    assert caught.value.kind == "cycle"
    assert caught.value.reason == "X is defined in terms of itself"


def test_a_value_that_failed_on_one_gpu_is_asked_again_there(tmp_path: Path) -> None:
    """A module value kept per GPU: one GPU's failure is not remembered as pending
    (the next read on that GPU fails the same way, not as a cycle)."""
    header = "X = 1 // (current_platform.get_device_capability().major - 8)\n"
    body = cm("f", "return X") + cm("g", "return X + 1")
    it, cls = load(tmp_path, body, header=HEADER + header)
    assert ask(it, cls, "f", capability=(9, 0)) == 1
    for name in ("f", "g"):
        with pytest.raises(Raised) as caught:
            ask(it, cls, name, capability=(8, 0))
        assert caught.value.kind == "ZeroDivisionError"
    assert ask(it, cls, "g", capability=(9, 0)) == 2


def test_class_statements_of_a_module_read_piece_by_piece_are_noted(tmp_path: Path) -> None:
    """What the class scan read is noted (a kept answer depends on it); a module
    parsed whole notes the whole file instead."""
    it, _ = load(tmp_path, cm("f", "return 1"))
    module = it.module(MODULE)
    assert module is not None and module.chunks is not None
    with it.tree.recording() as record:
        names = [node.name for node in module.class_nodes()]
    assert "MyBackend" in names
    assert ("mention", "class ") in record.views[FILE]

    it.tree.parse(FILE)
    it2 = Interpreter(it.tree, Machine())  # (a page reader parsed the file whole)
    whole = it2.module(MODULE)
    assert whole is not None and whole.chunks is None
    with it2.tree.recording() as record:
        assert [node.name for node in whole.class_nodes()] == names
    assert ("mention", "class ") not in record.views.get(FILE, set())


GETATTR_MODULE = "if TYPE_CHECKING:\n    from x import Hidden\nShown = 1\n"


@pytest.mark.parametrize(
    ("getattr_source", "expected"), [("", None), ("def __getattr__(name):\n    return 42\n", 42)]
)
def test_a_module_name_never_bound_is_its_getattr_s(
    tmp_path: Path, getattr_source: str, expected: object
) -> None:
    """``mod.Hidden`` bound only under TYPE_CHECKING: the module's ``__getattr__``
    answers it, and without one it is unknown (never bound when the module runs)."""
    source = "from typing import TYPE_CHECKING\n" + GETATTR_MODULE + getattr_source
    it, cls = load(
        tmp_path,
        cm("f", "import vllm.lazy", "return vllm.lazy.Hidden"),
        extra={"vllm/lazy.py": source},
    )
    if expected is None:
        with pytest.raises(Unknown, match="Hidden is never bound when the module runs"):
            ask(it, cls, "f")
    else:
        assert ask(it, cls, "f") == expected
