"""The abstract head size: the integer-set domain (pyeval/intsets), and predicates of
small invented trees evaluated over it (pyeval/abstract, runtime/head_sizes), each
checked against the same predicate run by CPython on every size from 1 to 4096."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import head_size_items
import pytest
from runtime_trees import runtime_backend

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter, Raised, Unknown
from sphinxext_attn.pyeval.abstract import AbstractInt, explore
from sphinxext_attn.pyeval.intsets import MAX_MOD, IntSet, Run, TooComplex, run
from sphinxext_attn.pyeval.values import NODE
from sphinxext_attn.runtime.cell_text import head_size_text
from sphinxext_attn.runtime.head_sizes import head_size_answer, json_items
from sphinxext_attn.runtime.questions import Asker
from sphinxext_attn.source.tree import SourceTree

SIZES = head_size_items.SIZES
MODULE = head_size_items.MODULE


def members(s: IntSet) -> set[int]:
    return {x for x in SIZES if x in s}


def expand(items: Any) -> set[int] | None:
    return head_size_items.expand(items, SIZES)


# -- the domain ------------------------------------------------------------------------
SETS = {
    "ge32": IntSet.of([run(32, None)]),
    "m8le512": IntSet.of([run(1, 512, 8)]),
    "pts": IntSet.points([64, 128, 256, 576]),
    "odd": IntSet.of([run(1, None, 2, [1])]),
    "m6r2or3": IntSet.of([run(10, 900, 6, [2, 3])]),
    "empty": IntSet(),
}


@pytest.mark.parametrize("a", SETS)
@pytest.mark.parametrize("b", SETS)
def test_set_algebra_is_exact(a: str, b: str) -> None:
    x, y = SETS[a], SETS[b]
    assert members(x & y) == members(x) & members(y)
    assert members(x | y) == members(x) | members(y)
    assert members(x - y) == members(x) - members(y)
    assert members(x.complement()) == set(SIZES) - members(x)


def test_runs_are_normalised_and_neighbours_join() -> None:
    assert run(3, 100, 16, [0, 8]) == run(8, 96, 8, [0])  # smallest period, ends on members
    assert run(5, 7, 8, [0]) is None
    joined = IntSet.of([run(1, 256, 8), run(257, 512, 8)])
    assert joined.runs == (run(8, 512, 8),)
    assert (IntSet.points([31]) | IntSet.of([run(32, None)])) == IntSet.of([run(31, None)])
    assert IntSet.everything().is_everything()
    assert (IntSet.of([run(1, 10)]) | IntSet.of([run(11, None)])).is_everything()
    # a run joins the one just before it, not the first of the set
    later = IntSet.of([run(1, 3), run(10, 20, 2), run(22, 30, 2)])
    assert later.runs == (run(1, 3), run(10, 30, 2))


def test_every_size_intersected_with_a_set_gives_the_set_as_written() -> None:
    """Either way round, the runs are kept as they are, not written anew: ``s`` is
    2..10 kept as three runs, which writing it again would change (and the items
    written for a set follow its runs)."""
    s = IntSet.of([run(2, 6), run(7, 10), run(2, 8, 2)])
    assert s.runs == (run(2, 6), run(7, 7), run(8, 10))
    assert (IntSet.everything() & s).runs == (s & IntSet.everything()).runs == s.runs
    assert (IntSet.everything() & IntSet()).runs == (IntSet() & IntSet.everything()).runs == ()


def test_periods_beyond_the_limit_are_too_complex() -> None:
    with pytest.raises(TooComplex):
        IntSet.of([run(1, None, 4093)]) & IntSet.of([run(1, None, 4091)])
    with pytest.raises(TooComplex, match="4097"):
        run(1, None, MAX_MOD + 1)
    assert run(1, None, MAX_MOD, [1]) == Run(1, None, MAX_MOD, frozenset({1}))


@pytest.mark.parametrize(
    ("s", "items", "text"),
    [
        (IntSet.everything(), "any", ()),
        (IntSet(), [], ("None",)),
        (IntSet.of([run(32, None)]), [{"min": 32, "max": None, "multiple_of": None}], ("≥32",)),
        (
            IntSet.of([run(1, 512, 8)]),
            [{"min": None, "max": 512, "multiple_of": 8}],
            ("%8", "≤512"),
        ),
        (IntSet.points([64, 128, 256]), [64, 128, 256], ("64", "128", "256")),
        (
            IntSet.points([576]) | IntSet.of([run(1, 512, 64)]),
            [{"min": None, "max": 512, "multiple_of": 64}, 576],
            ("%64, ≤512 or 576",),
        ),
        (
            IntSet.of([run(1, None, 6, [0, 2, 3, 4])]),  # multiples of 2 or of 3
            [
                {"min": None, "max": None, "multiple_of": 2},
                {"min": None, "max": None, "multiple_of": 3},
            ],
            ("%2 or %3",),
        ),
        (
            # multiples of 2 or of 9 (a period of 18): %6 adds nothing to %2
            IntSet.of([run(1, None, 18, [0, 2, 4, 6, 8, 9, 10, 12, 14, 16])]),
            [
                {"min": None, "max": None, "multiple_of": 2},
                {"min": None, "max": None, "multiple_of": 9},
            ],
            ("%2 or %9",),
        ),
    ],
)
def test_sets_are_written_as_items_and_cells(s: IntSet, items: Any, text: tuple[str, ...]) -> None:
    got = json_items(s, ("x.py", 1))
    assert got == items
    assert expand(got) == members(s)
    assert head_size_text(got) == text


def test_a_set_the_items_cannot_write_is_unknown() -> None:
    with pytest.raises(Unknown, match="not bounds and multiples"):
        json_items(IntSet.of([run(1, None, 2, [1])]), ("x.py", 3))


# -- predicates over an abstract size ----------------------------------------------------
def test_explore_runs_each_path_once() -> None:
    calls: list[int] = []

    def predicate(x: AbstractInt) -> bool:
        calls.append(1)
        from sphinxext_attn.pyeval.abstract import compare

        if compare(ast.NotEq(), AbstractInt(x.explorer, 1, 0, 8), 0, ("", 0)):
            return False
        return compare(ast.LtE(), x, 256, ("", 0))

    found = explore(predicate, ("", 0))
    assert members(found) == {h for h in SIZES if h % 8 == 0 and h <= 256}
    assert len(calls) == 3


def test_a_residue_taken_again_by_a_divisor_of_its_modulus_stays_abstract() -> None:
    """``x % 24 % 8`` is ``x % 8``; ``x % 8 % 3`` is not evaluated (no run of sizes)."""
    from sphinxext_attn.pyeval.abstract import binop, compare

    def predicate(x: AbstractInt) -> bool:
        twice = binop(ast.Mod(), binop(ast.Mod(), x, 24, ("", 0)), 8, ("", 0))
        assert isinstance(twice, AbstractInt) and twice.mod == 8
        return compare(ast.Eq(), twice, 0, ("", 0))

    assert members(explore(predicate, ("", 0))) == {h for h in SIZES if h % 8 == 0}
    with pytest.raises(Unknown, match="not evaluated"):
        explore(lambda x: binop(ast.Mod(), binop(ast.Mod(), x, 8, ("", 0)), 3, ("", 0)), ("", 0))


PREDICATES = [
    "return head_size >= 32",
    "return head_size > 0",
    "return head_size % 8 == 0 and head_size <= 512",
    "if head_size % 8 != 0:\n    return False\nif head_size <= 256:\n    return True\n"
    "return False",
    "return head_size in (64, 128, 256) or head_size == 576",
    "return head_size not in [1, 2, 3] and head_size < 100",
    "return 32 <= head_size <= 256 and head_size % 16 == 0",
    "return (head_size - 64) * 2 < 128",
    "return -head_size > -100",
    "return (head_size + 4) % 8 == 4",
    "return head_size % 4 == 0 or head_size % 6 == 0",
    "return isinstance(head_size, int) and bool(head_size % 2 == 0)",
    "return head_size in range(64, 1025, 64)",
    # the stop on the step's grid is left out (a bound one step too far: issue 39)
    "return head_size in range(64, 1024, 64)",
    "return head_size in range(1, 257)",
    "return head_size in range(256, 0, -32)",
    "return head_size not in range(8, 9)",
    "return max(head_size, 64) == 64",
    "return head_size != 'auto' and head_size is not None",
    "sizes = cls.get_supported_head_sizes()\nreturn not sizes or head_size in sizes",
    "return all(head_size % m == 0 for m in (2, 8))",
    "return head_size // 1 >= 0 if False else head_size <= 1024",
    # exact answers that a wrong scale, offset or comparison changes (mutants, issue 26)
    "return head_size * 2 == 256",
    "return head_size - 8 == 120",
    "return head_size != 128 and head_size != 64",
    "return (head_size - 16) * 4 == 448",
    # a number minus a shifted head size; a range whose start is not a multiple of
    # its step (mutants, issue 39: ``c - offset`` and ``start % step``)
    "return 300 - (head_size + 16) >= 44",
    "return head_size in range(6, 60, 3)",
    "return head_size in range(5, 40, 3)",
    # a scale above 34 is still a number the domain keeps (``2**32`` -> ``2+32``)
    "return head_size * 40 <= 4000",
    # a class of the tree named like a builtin type is not that type (mutant: an
    # ``isinstance`` kind taken as a builtin type by its name alone)
    "class int:\n    pass\nreturn isinstance(head_size, int) or head_size == 64",
    # edges of the domain's tests (issue 39): floats, residues in a set, truth, min, int()
    "return head_size > 2.5 and head_size <= 100.5",
    "return head_size == 64.0 or head_size < 3.0",
    "return head_size % 8 in (0, 4) and head_size < 64",
    "return head_size % 6 in [0, 3]",
    "try:\n    return head_size % 0 == 1\nexcept ZeroDivisionError:\n    return head_size < 5",
    "return head_size in {16: 'a', 32: 'b', 'x': 'c'}",
    "if head_size - 64:\n    return head_size < 100\nreturn False",
    "return min(head_size, 100) >= 50",
    "return max(80, head_size) == head_size",
    "return int(head_size) >= 10",
    "return head_size in range(100, 50)",
    "return head_size in range(3, 40, 5) or head_size in range(40, 60, 1)",
    "return head_size in range(40, 10, -3)",
    "return (head_size * 3) in range(30, 60)",
    "return head_size % 8 in range(0, 4096)",  # the longest range tested item by item
    "return head_size * 2 == 65 or head_size == 3.5 or head_size == 7",  # no whole size
    "return head_size != None and head_size >= 4090",
    "return 100 - head_size > 20",
    "return head_size * 0 == 0 and (head_size + 5) % 4 == 1",
    "return head_size % 8 % 4 == 0",
    "return head_size + True > 10",
    "try:\n    return head_size < 'a'\nexcept TypeError:\n    return head_size > 100",
    "import enum\nclass E(enum.IntEnum):\n    A = 64\n"
    "return head_size == E.A or head_size + E.A == 100",
]


_backend, _method = head_size_items.backend, head_size_items.head_size_method


@pytest.mark.parametrize("body", PREDICATES)
def test_predicate_sets_match_python(tmp_path: Path, body: str) -> None:
    namespace: dict[str, Any] = {}

    class Cls:
        @staticmethod
        def get_supported_head_sizes() -> list[int]:
            return [72, 80]

    source = "def supports_head_size(cls, head_size):\n" + "".join(
        f"    {line}\n" for line in body.splitlines()
    )
    exec(compile(source, "<predicate>", "exec"), namespace)  # the test's own text, not vLLM's
    want = {h for h in SIZES if namespace["supports_head_size"](Cls, h)}
    it, cls = _backend(tmp_path, _method(body))
    answer = head_size_answer(Asker(it, cls))
    assert answer.unknown is None, answer.unknown
    assert expand(answer.value) == want


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("return head_size * head_size < 4096", "two head sizes"),
        ("return str(head_size) == '64'", "str()"),
        ("return len(range(head_size)) > 3", "range()"),
        ("return head_size // 2 == 32", "FloorDiv"),
        ("return {head_size: 1}[64] == 1", "key"),
        ("return f'{head_size}' == '64'", "formatting"),
        ("return head_size % 2 == 1", "not bounds and multiples"),
        ("return head_size < float('inf')", "a head size compared with an infinite or nan float"),
        ("return head_size == [64]", "a head size compared with list"),
        ("return head_size < head_size + 1", "two head sizes compared with each other"),
        ("return head_size in 'abc'", "a head size tested for membership in str"),
        (
            "import os\nreturn isinstance(head_size, os.PathLike)",
            "isinstance() with a type outside",
        ),
        ("return head_size * 2 in range(1, 10000)", "a head size tested against a long range"),
        ("return head_size + 1.5 > 3", "head size Add float not evaluated"),
        ("return head_size % -4 == 0", "a head size modulo a negative number"),
        ("return (head_size + 1) // 2 > 3", "head size arithmetic (FloorDiv) not evaluated"),
        ("return 100 % head_size == 0", "head size arithmetic (Mod) not evaluated"),
        ("return (head_size % 8) + 1 > 3", "head size arithmetic (Add) not evaluated"),
        ("return head_size * 2**33 > 0", "head size arithmetic with numbers too large to keep"),
        ("return head_size % 4097 == 0", "head size arithmetic with numbers too large to keep"),
        ("return head_size % 4096 == 0 and head_size % 4095 == 0", "too complex to keep"),
        ("return [head_size] < [64]", "a head size compared outside the evaluator's operators"),
        # compared natively inside a dict: once a plain False on every path (issue 39)
        ("return {1: head_size} == {1: 64}", "a head size compared outside the evaluator's"),
        ("return {1: head_size} != {1: 64}", "a head size compared outside the evaluator's"),
        # more separate sizes than a set keeps (a TooComplex traceback once, issue 39)
        ("return head_size in tuple(range(1, 600, 2))", "257 separate pieces"),
    ],
)
def test_what_the_domain_does_not_keep_is_unknown_with_its_place(
    tmp_path: Path, body: str, reason: str
) -> None:
    it, cls = _backend(tmp_path, _method(body))
    answer = head_size_answer(Asker(it, cls))
    assert answer.unknown is not None
    assert reason in answer.unknown.reason
    assert answer.unknown.path.endswith("my_attn.py") and answer.unknown.line > 0


def test_a_raise_refuses_its_sizes(tmp_path: Path) -> None:
    body = "if head_size > 128:\n    raise ValueError('too big')\nreturn head_size % 64 == 0"
    it, cls = _backend(tmp_path, _method(body))
    assert head_size_answer(Asker(it, cls)).value == [64, 128]


def test_a_rule_that_depends_on_the_gpu_is_joined_over_gpus(tmp_path: Path) -> None:
    body = (
        "if current_platform.is_device_capability_family(100):\n"
        "    return head_size % 8 == 0 and head_size <= 512\n"
        "return head_size % 8 == 0 and head_size <= 256"
    )
    root = tmp_path
    runtime_backend(root, _method(body), header="from vllm.platforms import current_platform\n")
    it = Interpreter(SourceTree(root), Machine())
    cls = it.module_attr(it.module(MODULE), "MyBackend", NODE)
    answer = head_size_answer(Asker(it, cls))
    assert answer.value == [{"min": None, "max": 512, "multiple_of": 8}]


def test_too_many_cases_is_unknown(tmp_path: Path) -> None:
    body = "return sum(1 for k in range(1, 300) if head_size > k) > 150"
    it, cls = _backend(tmp_path, _method(body))
    answer = head_size_answer(Asker(it, cls))
    assert answer.unknown is not None and "cases" in answer.unknown.reason


def test_the_abstract_value_is_never_remembered_as_a_plain_answer(tmp_path: Path) -> None:
    """A helper called with the abstract size is asked again on every path (the call
    memo has no key for it), so each path sees its own sizes."""
    body = "return cls._ok(head_size)\n"
    helper = "@classmethod\ndef _ok(cls, h):\n    return h >= 32\n\n"
    it, cls = _backend(tmp_path, helper + _method(body))
    assert expand(head_size_answer(Asker(it, cls)).value) == set(range(32, 4097))
    with pytest.raises((Unknown, Raised)):
        hash(AbstractInt(None))  # type: ignore[arg-type]


def test_a_number_minus_the_head_size_is_tested_as_python_does() -> None:
    from sphinxext_attn.pyeval.abstract import binop, compare

    def predicate(x: AbstractInt) -> bool:
        return compare(ast.GtE(), binop(ast.Sub(), 300, x, ("", 0)), 44, ("", 0))

    assert members(explore(predicate, ("", 0))) == {h for h in SIZES if 300 - h >= 44}


def test_an_endless_rule_on_one_gpu_and_a_list_on_another_are_joined(tmp_path: Path) -> None:
    """Runs from the same first size, one endless and one bounded, are put in order
    (comparing their ends once raised TypeError, a traceback instead of a cell)."""
    body = (
        "if current_platform.get_device_capability().major >= 9:\n"
        "    return head_size >= 8\n"
        "return head_size in (8, 16)"
    )
    runtime_backend(
        tmp_path, _method(body), header="from vllm.platforms import current_platform\n"
    )
    it = Interpreter(SourceTree(tmp_path), Machine())
    cls = it.module_attr(it.module(MODULE), "MyBackend", NODE)
    answer = head_size_answer(Asker(it, cls))
    assert answer.value == [{"min": 8, "max": None, "multiple_of": None}]
    joined = IntSet.of([run(8, None), run(8, 16, 8)])
    assert [x in joined for x in (7, 8, 9, 16, 17, 4096)] == [False, True, True, True, True, True]
