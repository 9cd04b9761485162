"""The edges of the evaluator's rules, where a slightly different rule would answer
differently: the size limit of a slice assignment, the complement of a bounded
set, which tree functions stand for the engine config."""

from __future__ import annotations

import pytest
from evaluator import MODULE, ask, cm, our_answer

from sphinxext_attn.pyeval.intsets import IntSet, run


def test_a_slice_assignment_may_fill_a_list_up_to_the_limit_and_no_further(tmp_path):
    full = our_answer(tmp_path / "a", "", ["x = []", "x[0:0] = range(100_000)", "return len(x)"])
    assert full == ("ok", 100_000)
    over = our_answer(tmp_path / "b", "", ["x = [1]", "x[0:0] = range(100_000)", "return len(x)"])
    assert over[0] == "unknown" and over[1].startswith("sequence too long to evaluate")


def test_the_complement_of_a_bounded_run_starts_right_after_it():
    inside = IntSet.of([run(4, 10)])
    outside = inside.complement()
    assert [x in outside for x in (1, 3, 4, 10, 11, 12)] == [True, True, False, False, True, True]
    assert outside.first() == 1 and (outside & IntSet.of([run(5, None)])).first() == 11


def test_only_the_config_getters_stand_for_the_engine_config(tmp_path):
    """A tree function beside ``VllmConfig`` whose name is not a config getter runs."""
    prelude = (
        "class VllmConfig:\n    pass\n\n"
        "def get_current_vllm_config():\n    return VllmConfig()\n\n"
        "def helper():\n    return 5\n\n"
        "def another_helper():\n    return 6\n"
    )
    assert our_answer(tmp_path / "a", prelude, ["return helper()"]) == ("ok", 5)
    assert our_answer(tmp_path / "b", prelude, ["return another_helper()"]) == ("ok", 6)


def test_enum_members_are_equal_by_class_and_name(tmp_path):
    prelude = (
        "import enum\n\nclass A(enum.Enum):\n    X = 1\n    Y = 2\n\n"
        "class B(enum.Enum):\n    X = 1\n"
    )
    answers = [
        our_answer(tmp_path / str(i), prelude, [f"return {expr}"])
        for i, expr in enumerate(
            ["[A.X, A.Y].index(A.Y)", "[A.X, B.X].count(B.X)", "[A.X, A.Y].count(A.X)"]
        )
    ]
    assert answers == [("ok", 1), ("ok", 1), ("ok", 1)]


def test_amdsmi_answers_as_a_machine_with_one_gpu_of_the_arch(tmp_path):
    from runtime_trees import runtime_backend

    from sphinxext_attn.knowledge.machine import Machine
    from sphinxext_attn.model.environment import Environment
    from sphinxext_attn.pyeval import Interpreter, Unknown
    from sphinxext_attn.pyeval.values import NODE
    from sphinxext_attn.source.tree import SourceTree

    body = cm(
        "f",
        "amdsmi.amdsmi_init()",
        "handle = amdsmi.amdsmi_get_processor_handles()[0]",
        "arch = amdsmi.amdsmi_get_gpu_asic_info(handle)['target_graphics_version']",
        "amdsmi.amdsmi_shut_down()",
        "return arch",
    ) + cm("g", "return amdsmi.amdsmi_get_gpu_vram_usage(None)")
    runtime_backend(tmp_path, body, header="import amdsmi\n")
    machine = Machine(Environment(platform="rocm", arch="gfx950"))
    interp = Interpreter(SourceTree(tmp_path), machine)
    cls = interp.module_attr(interp.module(MODULE), "MyBackend", NODE)
    assert ask(interp, cls, "f") == "gfx950"
    with pytest.raises(Unknown):
        ask(interp, cls, "g")


def test_a_name_a_loop_imports_is_bound_by_the_loop(tmp_path):
    """An import inside a loop binds its name where the loop runs (a binding the
    evaluator does not evaluate); the rest of the body still answers."""
    body = ["for _ in range(1):", "    import os as o", "return 1"]
    assert our_answer(tmp_path / "a", "", body) == ("ok", 1)
    prelude = "for _ in range(1):\n    import os as o\n"
    got = our_answer(tmp_path / "b", prelude, ["return o"])
    assert got[0] == "unknown"


ENGINE_CONFIG = (
    "from dataclasses import field\n\n"
    "class CacheConfig:\n    block_size: int = 16\n\n"
    "class VllmConfig:\n"
    "    a_first: int = 1\n"
    "    cache_config: CacheConfig = field(default_factory=CacheConfig)\n"
    "    middle: str = 'm'\n"
    "    not_annotated = 'plain'\n"
    "    zeta: int = field(default=3)\n"
    "    late: int = field(repr=False, default=7)\n"
    "    bare: int\n\n"
    "def get_current_vllm_config():\n    return VllmConfig()\n"
)


@pytest.mark.parametrize(
    ("expr", "answer"),
    [
        ("c.middle", ("ok", "m")),
        ("c.a_first", ("ok", 1)),
        ("c.zeta", ("ok", 3)),
        ("c.late", ("ok", 7)),
        ("c.cache_config.block_size", ("ok", 16)),
    ],
)
def test_the_engine_config_answers_each_field_its_own_default(tmp_path, expr, answer):
    """Each field is read from its own declaration, whatever the fields before and
    after it (never ``VllmConfig()`` run)."""
    lines = ["c = get_current_vllm_config()", f"return {expr}"]
    assert our_answer(tmp_path, ENGINE_CONFIG, lines) == answer


@pytest.mark.parametrize(
    ("expr", "reason"),
    [("c.bare", "config field bare has no default"), ("c.nothing", "has no field nothing")],
)
def test_an_engine_config_field_without_a_default_is_unknown(tmp_path, expr, reason):
    lines = ["c = get_current_vllm_config()", f"return {expr}"]
    kind, text = our_answer(tmp_path, ENGINE_CONFIG, lines)
    assert kind == "unknown" and reason in text
