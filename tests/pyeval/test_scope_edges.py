"""Where a name comes from: a function's own locals (read before they are bound),
the enclosing function's, the module's, and how a module's names are read
(piece by piece or from the whole file)."""

from __future__ import annotations

from pathlib import Path

import pytest
from evaluator import our_answer, python_answer

PRELUDE = "a = 7\ni = 'module'\nt = 'module'\n"

#: (body, what Python raises): a name the function binds, read before any binding ran
READ_BEFORE_BOUND = [
    ("y = a\na = 1\nreturn y", "UnboundLocalError"),
    ("if False:\n    a = 1\nreturn a", "UnboundLocalError"),
    ("for i in []:\n    pass\nreturn i", "UnboundLocalError"),
    ("try:\n    pass\nexcept ValueError as a:\n    pass\nreturn a", "UnboundLocalError"),
    ("def inner():\n    return a\nr = inner()\na = 2\nreturn r", "NameError"),
    ("r = a\ndef a():\n    return 1\nreturn r", "UnboundLocalError"),
    ("r = a\nimport os as a\nreturn r", "UnboundLocalError"),
    ("r = a\nclass a:\n    pass\nreturn r", "UnboundLocalError"),
    ("r = a\n[(a := v) for v in [1]]\nreturn r", "UnboundLocalError"),
    ("r = a\na += 1\nreturn r", "UnboundLocalError"),
    ("r = a\n(a, b), c = (1, 2), 3\nreturn r", "UnboundLocalError"),
    ("r = a\nf = lambda v=(a := 1): v\nreturn r", "UnboundLocalError"),
    (
        "if False:\n    match 1:\n        case {**a}:\n            pass\nreturn a",
        "UnboundLocalError",
    ),
    (
        "if False:\n    match 1:\n        case [*a]:\n            pass\nreturn a",
        "UnboundLocalError",
    ),
    ("r = a\n@(lambda f, d=(a := 1): f)\ndef g():\n    pass\nreturn r", "UnboundLocalError"),
]

#: bodies whose names are not the function's own locals: the module's value
NOT_LOCAL = [
    "ys = [i for i in range(3)]\nreturn i, ys",
    "ys = {t: 1 for t in 'ab'}\nreturn t, sorted(ys)",
    "global a\nr = a\na = 3\nreturn r, a",
    "f = lambda a=a: a\nreturn f(), a",
    "def inner(a):\n    a = a + 1\n    return a\nreturn inner(1), a",
    "class C:\n    a = 5\nreturn C.a, a",
    "fs = [lambda: (a := 2) for v in [1]]\nreturn a, fs[0]()",
    "f = lambda: [(a := 3) for v in [1]]\nreturn a, f()",
    "def inner():\n    nonlocal_free = a\n    return nonlocal_free\nreturn inner()",
]


@pytest.mark.parametrize(("body", "error"), READ_BEFORE_BOUND)
def test_a_local_read_before_it_is_bound_is_unknown(tmp_path: Path, body: str, error: str) -> None:
    """Python raises (the name is local by the function's syntax); the evaluator says
    unknown rather than reading the enclosing scope's ``a``."""
    assert python_answer(PRELUDE, body) == ("raise", error)
    ours = our_answer(tmp_path, PRELUDE, body.split("\n"))
    assert ours[0] == "unknown", ours
    assert ours[1].split(" (")[0].endswith("is read before it is bound"), ours


@pytest.mark.parametrize("body", NOT_LOCAL)
def test_a_name_the_function_does_not_bind_is_the_enclosing_one(tmp_path: Path, body: str) -> None:
    python = python_answer(PRELUDE, body)
    assert python[0] == "ok"
    assert our_answer(tmp_path, PRELUDE, body.split("\n")) == python
