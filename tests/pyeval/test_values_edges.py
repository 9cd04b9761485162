"""Edges of the evaluator's values and raising (pyeval/values.py, exceptions.py):
how values compare natively (dict keys, sets, ``list.count``), how they are
written in reasons, when the step budget runs out, the GPU argument that reads
the GPU when looked into, and which ``except`` takes a raise of a tree class."""

from __future__ import annotations

import ast

import pytest
from evaluator import _reason, as_python, our_answer

from sphinxext_attn.pyeval.values import (
    Budget,
    Builtin,
    EnumMember,
    External,
    GpuInstance,
    Instance,
    LimitExceeded,
    PyClass,
    PyFunction,
)


def _cls(name: str) -> PyClass:
    return PyClass(name, None, None, None)  # type: ignore[arg-type]


def test_values_are_written_by_their_names():
    cls = _cls("A")
    assert repr(External("torch.float16")) == "torch.float16"
    assert repr(cls) == "<class A>"
    assert repr(PyFunction("f", None, None, None)) == "<function f>"  # type: ignore[arg-type]
    assert repr(Instance(cls, {"x": 1, "y": "s"})) == "A(x=1, y='s')"
    assert repr(EnumMember(cls, "RED", 1)) == "A.RED"
    assert repr(Builtin("len", len)) == "<builtin len>"


def test_an_instance_equals_itself_or_as_a_named_tuple():
    cls = _cls("A")
    plain, other = Instance(cls), Instance(cls)
    assert plain == plain and plain != other and hash(plain) == id(plain)
    named = Instance(cls, {"a": 1, "b": 2}, (1, 2))
    assert named == (1, 2) and named == Instance(cls, {}, (1, 2)) and hash(named) == hash((1, 2))
    assert named != Instance(cls, {}, (1, 3)) and named != plain and named != [1, 2]


def test_enum_members_compare_natively_as_python_does():
    a, b = _cls("A"), _cls("B")
    assert EnumMember(a, "X", "x", True) == EnumMember(b, "Y", "x", True)  # two str enums
    assert EnumMember(a, "X", "x", True) != EnumMember(b, "Y", "y", True)
    assert EnumMember(a, "X", 1) != EnumMember(b, "X", 1)  # plain enums: by class and name
    assert EnumMember(a, "X", 1) == EnumMember(a, "X", 2) != EnumMember(a, "Y", 1)
    assert EnumMember(a, "X", "x", True) == "x" and EnumMember(a, "X", "x", True) != ["x"]
    assert EnumMember(a, "X", "x") != "x"
    assert EnumMember(a, "X", 1, True) == True  # noqa: E712 (an IntEnum member equals True)
    assert EnumMember(a, "X", 1.5, True) == 1.5 and EnumMember(a, "X", 1, True) == 1
    assert hash(EnumMember(a, "X", "x", True)) == hash("x")


def test_the_budget_runs_out_below_zero_steps():
    node = ast.parse("\n\nx").body[0]
    budget = Budget(steps=1)
    budget.tick(node, "m.py")
    with pytest.raises(LimitExceeded, match="step budget exhausted") as raised:
        budget.tick(node, "m.py")
    assert raised.value.where == "m.py:3"
    budget = Budget(steps=3)
    budget.spend(3, ("m.py", 2))
    assert budget.steps == 0
    with pytest.raises(LimitExceeded) as raised:
        budget.spend(1, ("m.py", 2))
    assert raised.value.where == "m.py:2"


class _Reader:
    def __init__(self) -> None:
        self.reads = 0

    def read_gpu(self) -> None:
        self.reads += 1


def test_the_gpu_argument_reads_the_gpu_only_when_looked_into():
    base = Instance(_cls("DeviceCapability"), {"major": 9, "minor": 0}, (9, 0))
    reader = _Reader()
    gpu = GpuInstance(base, reader)  # type: ignore[arg-type]
    assert reader.reads == 0  # passing it on reads nothing
    assert gpu.items == (9, 0) and reader.reads == 1
    assert gpu.fields == {"major": 9, "minor": 0} and reader.reads == 2
    assert gpu == (9, 0) and reader.reads > 2
    seen = reader.reads
    assert hash(gpu) == hash((9, 0)) and reader.reads > seen
    seen = reader.reads
    gpu.items = (8, 0)
    gpu.fields = {"major": 8}
    assert gpu.__dict__["items"] == (8, 0) and gpu.__dict__["fields"] == {"major": 8}
    assert gpu.cls is base.cls and reader.reads == seen  # setting reads nothing


CLASSES = (
    "import abc\nclass E(ValueError, abc.ABC):\n    pass\n"
    "class A:\n    pass\nclass F(E):\n    pass\n"
)


@pytest.mark.parametrize(
    "body",
    [
        "try:\n    raise E('x')\nexcept ValueError:\n    return 'value'",
        "try:\n    raise F('x')\nexcept E:\n    return 'e'",
        "try:\n    raise F()\nexcept KeyError:\n    return 'key'\n"
        "except Exception:\n    return 'exc'",
        "raise A()",
        "raise NotImplemented",
        "raise KeyError('k')",
        "return [A()].count(A()), [1, A()].count(1)",
    ],
)
def test_raising_and_native_equality_answer_as_python(tmp_path, body):
    as_python(tmp_path, CLASSES, body)


def test_raising_a_class_with_a_base_outside_the_tree_is_unknown(tmp_path):
    prelude = "import torch\nclass M(torch.nn.Module):\n    pass\n"
    kind, detail = our_answer(tmp_path, prelude, ["raise M()"])
    assert (kind, _reason(detail)) == ("unknown", "M has a base outside the tree")


def test_a_limit_without_a_place_has_none():
    bare = LimitExceeded("stopped")
    assert (bare.path, bare.line, bare.where, bare.kind) == ("", 0, "", "steps")
    assert LimitExceeded("stopped", "m.py", kind="size").where == "m.py"
    assert LimitExceeded("stopped", "m.py", 4).where == "m.py:4"
