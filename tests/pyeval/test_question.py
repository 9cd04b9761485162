"""The question API: each question has its own budget and GPU, records what its
answer read, and ends a limit as :class:`LimitExceeded`, never a bare unknown."""

from __future__ import annotations

from pathlib import Path

import pytest
from evaluator import FILE, NODE, cm, load

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import (
    STEPS_PER_CELL,
    STEPS_PER_DECISION,
    STEPS_PER_PRIORITY_RUN,
    Interpreter,
    LimitExceeded,
    Unknown,
)
from sphinxext_attn.pyeval.values import CAPABILITY
from sphinxext_attn.source.tree import SourceTree

BODY = (
    cm("gpu", "return current_platform.get_device_capability().major")
    + cm("env", "return os.getenv('VLLM_MY_FLAG', 'off')")
    + cm("plain", "return 1 + 1")
    + cm(
        "spin",
        "total = 0",
        "for i in range(1000):",
        "    for j in range(1000):",
        "        total += j",
        "return total",
    )
    + cm("down", "return cls.down()")
    + cm("tell", "if True:", "    return 7", "return 8")
)


@pytest.fixture
def backend(tmp_path: Path) -> tuple[Interpreter, object]:
    return load(tmp_path, BODY)


def ask(it: Interpreter, cls: object, name: str) -> object:
    return it.call(it.getattr(cls, name, NODE, ""), [], {}, NODE, "")


def test_a_question_has_its_own_budget_and_gpu_and_puts_back_neither(backend):
    it, cls = backend
    with it.question(capability=(9, 0), steps=1_000) as q:
        assert it.capability == (9, 0)
        assert it.budget.steps == 1_000
        assert ask(it, cls, "gpu") == 9
    assert it.capability is None
    assert q.steps_spent is not None and 0 < q.steps_spent < 1_000
    # the next question starts afresh, whatever the last one spent
    with it.question(steps=STEPS_PER_CELL) as again:
        assert it.budget.steps == STEPS_PER_CELL
        assert it.capability is None
    assert again.read == 0


def test_what_the_answer_read_is_recorded(backend):
    it, cls = backend
    with it.question(capability=(8, 0), steps=STEPS_PER_CELL) as gpu:
        ask(it, cls, "gpu")
    assert gpu.read_capability and gpu.facts == []
    with it.question(steps=STEPS_PER_CELL) as env:
        assert ask(it, cls, "env") == "off"
    assert not env.read_capability
    assert env.facts == [("VLLM_MY_FLAG", "unset")]
    assert env.assumptions == ["VLLM_MY_FLAG=unset"]
    assert FILE in env.files
    with it.question(steps=STEPS_PER_CELL) as plain:
        assert ask(it, cls, "plain") == 2
    assert plain.read == 0 and plain.facts == []


def test_a_remembered_answer_brings_what_it_read(backend):
    it, cls = backend
    with it.question(capability=(9, 0), steps=STEPS_PER_CELL):
        ask(it, cls, "gpu")
    with it.question(capability=(9, 0), steps=STEPS_PER_CELL) as again:
        assert ask(it, cls, "gpu") == 9  # from the call memo
    assert again.read & CAPABILITY


def test_an_exhausted_budget_is_limit_exceeded(backend):
    it, cls = backend
    with pytest.raises(LimitExceeded) as caught, it.question(steps=2_000):
        ask(it, cls, "spin")
    assert caught.value.kind == "steps"
    assert caught.value.path == FILE and caught.value.line > 0
    assert isinstance(caught.value, Unknown)  # callers that catch Unknown still do
    # the budget of the next question is whole again
    with it.question(steps=STEPS_PER_CELL):
        assert ask(it, cls, "plain") == 2


def test_unbounded_recursion_is_limit_exceeded_with_a_place(backend):
    it, cls = backend
    with pytest.raises(LimitExceeded) as caught, it.question(steps=STEPS_PER_CELL):
        ask(it, cls, "down")
    assert caught.value.kind == "nesting"
    assert caught.value.path == FILE
    assert it.budget.depth == 0


def test_a_python_recursion_error_becomes_limit_exceeded(backend):
    it, _ = backend
    where = (FILE, 3)
    with pytest.raises(LimitExceeded) as caught, it.question(steps=10, where=where):
        raise RecursionError("maximum recursion depth exceeded")
    assert (caught.value.kind, caught.value.path, caught.value.line) == ("nesting", *where)
    with pytest.raises(LimitExceeded), it.guarded(where):
        raise RecursionError


def test_nothing_leaks_from_a_failed_question(backend):
    it, cls = backend
    with pytest.raises(LimitExceeded), it.question(capability=(10, 0), steps=100) as q:
        q.record_returns()
        ask(it, cls, "spin")
    assert it.capability is None
    assert it.returns is None
    assert it.open_questions == 0
    assert q.closed and not q.read_capability


def test_a_sub_question_goes_on_in_the_enclosing_budget_and_gpu(backend):
    it, cls = backend
    with it.question(capability=(9, 0), steps=5_000):
        with it.question(steps=None) as part:
            assert it.capability == (9, 0)
            ask(it, cls, "gpu")
        assert part.steps_spent is None
        left = it.budget.steps
        assert left < 5_000
        with it.question(capability=(8, 0), steps=1_000):  # its own budget
            ask(it, cls, "plain")
        assert it.budget.steps == left  # the enclosing question's budget is back
        assert it.capability == (9, 0)
    assert part.read_capability


def test_returns_are_recorded_from_where_the_question_asks(backend, tmp_path):
    it, cls = backend
    with it.question(steps=STEPS_PER_CELL, fresh_memos=True) as q:
        returns = q.record_returns()
        assert ask(it, cls, "tell") == 7
    assert [(r.path, r.value) for r in returns] == [(FILE, 7)]
    assert it.returns is None


def test_each_fact_has_its_own_bit_above_the_capability(tmp_path: Path):
    it = Interpreter(SourceTree(tmp_path), Machine())
    for name in ("A", "B", "C"):
        it.note_fact(name, name.lower())
    it.note_fact("A", "ignored")  # a fact noted again keeps its bit and value
    bits = [it._fact_bits[name] for name in "ABC"]
    assert bits == [2, 4, 8] and CAPABILITY == 1
    assert it.facts_of(CAPABILITY) == []
    assert it.facts_of(bits[1]) == [("B", "b")]
    assert it.facts_of(bits[0]) == [("A", "a")]
    assert it.facts_of(bits[0] | bits[2] | CAPABILITY) == [("A", "a"), ("C", "c")]
    assert it.facts_of(0) == []


def test_fresh_memos_last_only_as_long_as_their_question(backend):
    it, cls = backend
    memos = (it.call_memo, it.statement_memo)
    with it.question(steps=STEPS_PER_CELL, fresh_memos=True):
        assert it.call_memo is not memos[0] and it.statement_memo is not memos[1]
        assert ask(it, cls, "plain") == 2
    assert (it.call_memo, it.statement_memo) == memos
    with it.question(steps=STEPS_PER_CELL):
        assert (it.call_memo, it.statement_memo) == memos
    assert (it.call_memo, it.statement_memo) == memos


def test_the_budgets_are_those_the_documentation_states():
    """docs/analysis.rst tells readers what a question may spend; the constants are
    those numbers (``STEPS_PER_CELL = 50_001`` changed a cell's budget unnoticed)."""
    docs = Path(__file__).resolve().parents[2] / "docs" / "analysis.rst"
    text = " ".join(docs.read_text(encoding="utf-8").split())
    assert f"the step budget ({STEPS_PER_CELL:,} steps per question)" in text
    assert (
        f"({STEPS_PER_CELL:,} steps for a cell, {STEPS_PER_PRIORITY_RUN:,} for one run of"
        f" the priority function, {STEPS_PER_DECISION:,} for a selection)"
    ) in text
