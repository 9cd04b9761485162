"""The safe evaluator's two ways of not answering: ``Raised`` (the kind and message
Python would raise, caught by a tree ``except`` as in Python) and ``Unknown`` with its
reason, file and line for what it must not guess; and how asking each value treats
both."""

from __future__ import annotations

from pathlib import Path

import pytest
from evaluator import FILE, HEADER, ask, cm, load

from sphinxext_attn.pyeval import Raised, Unknown


def line_of(root: Path, text: str, rel: str = FILE) -> int:
    lines = (root / rel).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_except_catches_a_tree_subclass_of_a_builtin_exception(tmp_path):
    header = HEADER + "class MyError(ValueError):\n    pass\n"
    body = cm("f", "try:", "    raise MyError('x')", "except ValueError:", "    return 'caught'")
    it, cls = load(tmp_path, body, header=header)
    assert ask(it, cls, "f") == "caught"


def test_raised_carries_kind_and_message(tmp_path):
    body = cm("f", "if x:", "    raise ValueError(f'bad {x}')", "return 1 // x", args="x")
    it, cls = load(tmp_path, body)
    with pytest.raises(Raised) as exc:
        ask(it, cls, "f", 3)
    assert (exc.value.kind, exc.value.message) == ("ValueError", "bad 3")
    with pytest.raises(Raised) as exc:
        ask(it, cls, "f", 0)
    assert exc.value.kind == "ZeroDivisionError"


UNKNOWNS = [  # (statement, reason, the line the unknown points at)
    ("p = torch.cuda.get_device_properties(0)", "torch.cuda.get_device_properties", "p = torch"),
    ("while cls.x:\n        pass", "While", "while cls.x"),
    ("del cls.x", "Delete", "del cls.x"),  # a call's own locals are deleted; not this
    ("if torch.version.hip:\n        return 1", "torch.version.hip", "if torch.version"),
    (
        "import flashinfer\n    if flashinfer.ok:\n        return 1",
        "flashinfer.ok",
        "if flashinfer",
    ),
    ("return open('/etc/hostname').read()", "open", "return open"),
    ("return exec('1')", "exec", "return exec"),
    (
        "return (9, 0) < torch.cuda.get_device_capability()",
        "torch.cuda.get_device_capability",
        "return (9",
    ),
]


def test_del_of_a_calls_own_locals_unbinds_them(tmp_path):
    """``del (a, b)`` of a function's own arguments (vLLM's checks del those they do
    not use): evaluated; reading one afterwards raises as Python does."""
    from sphinxext_attn.pyeval import Raised

    body = "@classmethod\ndef f(cls, a=1, b=2):\n    del (a, b)\n    return 3\n"
    body += "\n@classmethod\ndef g(cls, a=1):\n    del a\n    return a\n"
    it, cls = load(tmp_path, body)
    assert ask(it, cls, "f", capability=(9, 0)) == 3
    with pytest.raises(Raised) as exc:
        ask(it, cls, "g", capability=(9, 0))
    assert exc.value.kind == "UnboundLocalError"


@pytest.mark.parametrize(("stmt", "reason", "where"), UNKNOWNS, ids=[u[1] for u in UNKNOWNS])
def test_unknown_names_reason_file_and_line(tmp_path, stmt, reason, where):
    body = f"x = 1\n\n@classmethod\ndef f(cls):\n    y = 0\n    {stmt}\n    return 2\n"
    it, cls = load(tmp_path, body)
    with pytest.raises(Unknown) as exc:
        ask(it, cls, "f", capability=(9, 0))
    assert reason in exc.value.reason
    assert (exc.value.path, exc.value.line) == (FILE, line_of(tmp_path, where))


def test_asking_each_value_raised_unsupported_and_missing_methods(tmp_path):
    from sphinxext_attn.runtime.questions import Asker

    body = cm(
        "supports_head_size", "if h > 128:", "    raise ValueError(h)", "return True", args="h"
    )
    body += cm("supports_dtype", "return True", args="dtype, extra")
    it, cls = load(tmp_path, body)
    ask = Asker(it, cls)
    # a value the method raises for is not accepted: vLLM asking it would fail
    assert ask.ask_each("supports_head_size", [64, 128, 256], ["64", "128", "256"]).value == [
        "64",
        "128",
    ]
    # a signature that does not take the one argument vLLM passes answers nothing
    answer = ask.ask_each("supports_dtype", [1, 2], ["a", "b"])
    assert answer.unknown is not None and "argument" in answer.unknown.reason
    # nor does a method the class does not have (not an empty list)
    answer = ask.ask_each("supports_nothing", [1, 2], ["a", "b"])
    assert answer.value is None and "AttributeError" in answer.raised


def test_math_domain_errors_are_raised(tmp_path):
    body = cm("f", "import math", "return math.sqrt(x)", args="x")
    it, cls = load(tmp_path, body)
    assert ask(it, cls, "f", 4) == 2.0
    with pytest.raises(Raised) as exc:
        ask(it, cls, "f", -1)
    assert exc.value.kind == "ValueError"
