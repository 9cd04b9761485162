"""One question put to the evaluator: its GPU, its step budget, what it read.

Callers never set the interpreter's budget or capability by hand: they ask

    with interp.question(capability=(9, 0), steps=STEPS_PER_CELL) as q:
        value = interp.call(method, [128], {}, node, path)
    q.read, q.facts, q.assumptions  # what the answer rests on

which gives the question a fresh budget and its GPU, turns a Python
``RecursionError`` into :class:`LimitExceeded`, and on leaving puts back the
GPU, recorded ``returns`` and budget of the question (if any) it was asked
inside, so nothing one question set leaks into the next.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol, TypeAlias

from sphinxext_attn.pyeval.callmemo import CallMemo, Signatures
from sphinxext_attn.pyeval.stmtmemo import StatementMemo
from sphinxext_attn.pyeval.values import (
    CAPABILITY,
    Budget,
    LimitExceeded,
    PyFunction,
    Return,
    Value,
)

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.scope import ModuleScope

#: What each kind of question may spend, in evaluation steps.
#: One cell of the runtime profile (``supports_head_size(128)`` on one GPU), and
#: the re-run that finds the line deciding it.
STEPS_PER_CELL = 50_000
#: One run of the priority function over one choice of its parameters.
STEPS_PER_PRIORITY_RUN = 200_000
#: One selection: vLLM's whole decision for one configuration, or one probe of it.
STEPS_PER_DECISION = 400_000

#: ``capability=SAME_GPU``: a part of the enclosing question, on its GPU.
SAME_GPU: Literal["same"] = "same"


@dataclass
class Question:
    """What one question read; final once its ``with`` block is left."""

    interp: QuestionMixin = field(repr=False)
    _capability: tuple[int, int] | None
    #: the capability bit and one bit per machine fact (``Interpreter.facts_of``)
    _read: int = 0
    #: every ``return`` executed, in order, since :meth:`record_returns`
    returns: list[Return] = field(default_factory=list)
    #: how many modules the interpreter had loaded when the question ended
    _modules_loaded: int = field(default=0, repr=False)
    #: the steps the question spent (None: it went on in the enclosing one's budget)
    steps_spent: int | None = None
    closed: bool = field(default=False, repr=False)

    @property
    def capability(self) -> tuple[int, int] | None:
        return self._capability

    @capability.setter
    def capability(self, value: tuple[int, int] | None) -> None:
        """Ask the rest of the question on another GPU (a platform derives its own)."""
        self._capability = value
        if not self.closed:
            self.interp.capability = value

    @property
    def read(self) -> int:
        """What the answer read so far (or in all, once the question is over)."""
        return self._read if self.closed else self.interp.capability_read

    @property
    def files(self) -> list[str]:
        """The files of the tree the interpreter had loaded when the question ended:
        a superset of those the answer read (a remembered answer may rest on any)."""
        loaded = self.interp.modules.values()
        count = self._modules_loaded if self.closed else len(self.interp.modules)
        return [m.path for m in itertools.islice(loaded, count) if m is not None]

    @property
    def read_capability(self) -> bool:
        """Whether the answer depends on the GPU."""
        return bool(self.read & CAPABILITY)

    @property
    def facts(self) -> list[tuple[str, str]]:
        """The machine facts (name, value as assumed) the answer rests on."""
        return self.interp.facts_of(self.read)

    def record_returns(self) -> list[Return]:
        """From now on, keep every ``return`` the question executes (``returns``)."""
        self.returns.clear()
        self.interp.returns = self.returns
        return self.returns

    @property
    def assumptions(self) -> list[str]:
        """The facts as ``NAME=VALUE``, as the tables list them."""
        return [f"{name}={value}" for name, value in self.facts]


#: one call of a function of the tree, as an observer is told of it: the function,
#: its positional and its keyword arguments
ObservedCall: TypeAlias = tuple[PyFunction, list[Value], dict[str, Value]]


class GpuObserver(Protocol):
    """Told, while set on an interpreter, of every call of a tree function (it runs
    it: ``run()``) and of every read of the GPU: what lets an answer that looks at
    the GPU only through a few calls be reused on another GPU where those calls
    answer alike (the selector's table)."""

    def observe(self, call: ObservedCall, run: Callable[[], Value]) -> Value: ...

    def read_gpu(self) -> None: ...

    def listen(self) -> object:
        """Start noting what an evaluation (a remembered statement's) makes the
        observer hear; the token goes to :meth:`heard`."""
        ...

    def heard(self, token: object) -> object:
        """What was heard since :meth:`listen` gave ``token`` (heard as usual too),
        for :meth:`hear_again` where the same evaluation is replayed; falsy when
        nothing was."""
        ...

    def hear_again(self, heard: object) -> None:
        """Hear what :meth:`heard` returned, as if the evaluation ran again here."""
        ...


class QuestionMixin:
    """The question API, for :class:`Interpreter`.

    Work outside any question (the names a class's module binds, read while the
    class is resolved) goes on in the steps the last question left."""

    #: questions being asked, the innermost last (nested: a GPU's own sub-question)
    open_questions: int = 0
    # the state a question sets and puts back (set up by ``Interpreter.__init__``)
    budget: Budget
    #: the device capability of the question being asked, if any
    capability: tuple[int, int] | None
    #: what an evaluation read from outside: CAPABILITY, and a bit per machine fact
    capability_read: int
    #: when a list: every return executed (path, line, value, expression), for provenance
    returns: list[Return] | None
    call_memo: CallMemo
    #: call signatures by function node, for every call memo of the interpreter
    signatures: Signatures
    statement_memo: StatementMemo
    #: when a dict: every tree function called (by id of its node), see :meth:`tracing`
    called: dict[int, PyFunction] | None
    modules: dict[str, ModuleScope | None]
    #: the machine facts read so far (bit ``2 << i`` is ``facts[i]``: name, value)
    facts: list[tuple[str, str]]
    _fact_bits: dict[str, int]

    #: told of calls and GPU reads (None: nobody asks, the usual case)
    gpu_observer: GpuObserver | None = None

    def read_gpu(self, mask: int = CAPABILITY) -> None:
        """The evaluation read what ``mask`` holds (a remembered answer's reads, or
        the GPU itself); the observer hears of it where that is the GPU."""
        self.capability_read |= mask
        if mask & CAPABILITY and self.gpu_observer is not None:
            self.gpu_observer.read_gpu()

    def note_fact(self, name: str, value: str) -> None:
        """The evaluation read the machine fact ``name`` (its value as assumed)."""
        bit = self._fact_bits.get(name)
        if bit is None:
            bit = self._fact_bits[name] = 2 << len(self.facts)
            self.facts.append((name, value))
        self.capability_read |= bit

    def facts_of(self, mask: int) -> list[tuple[str, str]]:
        """The facts (name, value) whose bits are in ``mask``."""
        return [fact for i, fact in enumerate(self.facts) if mask & (2 << i)]

    @contextmanager
    def question(
        self,
        *,
        capability: tuple[int, int] | None | Literal["same"] = SAME_GPU,
        steps: int | None,
        where: tuple[str, int] = ("", 0),
        fresh_memos: bool = False,
    ) -> Iterator[Question]:
        """Ask a question on ``capability`` (None: no GPU named; :data:`SAME_GPU`:
        the enclosing question's) with ``steps`` evaluation steps (None: a part of
        the enclosing question, in its budget).
        A ``RecursionError`` inside is :class:`LimitExceeded` at ``where``.
        ``fresh_memos`` answers without remembered calls (so every ``return`` runs:
        see :meth:`Question.record_returns`)."""
        budget = self.budget
        saved = (self.capability, self.capability_read, budget.steps, budget.depth, self.returns)
        saved_memos = (self.call_memo, self.statement_memo)
        if not isinstance(capability, str):
            self.capability = capability
        q = Question(self, self.capability)
        self.capability_read = 0
        if steps is not None:
            budget.steps, budget.depth = steps, 0
        if fresh_memos:
            self.call_memo, self.statement_memo = CallMemo(self.signatures), StatementMemo()

        self.open_questions += 1
        try:
            yield q
        except RecursionError:
            raise LimitExceeded("expression nested too deeply", *where, kind="nesting") from None
        finally:
            q._read, q.closed = self.capability_read, True
            q._modules_loaded = len(self.modules)  # (modules are only ever added)
            self.capability, self.returns = saved[0], saved[4]
            self.capability_read = saved[1] | q._read
            self.open_questions -= 1
            if steps is not None:
                q.steps_spent = steps - budget.steps
                budget.depth = saved[3]
                if self.open_questions:  # the enclosing question goes on in its own budget
                    budget.steps = saved[2]
            if fresh_memos:
                self.call_memo, self.statement_memo = saved_memos

    @contextmanager
    def tracing(self) -> Iterator[dict[int, PyFunction]]:
        """Every function of the tree called inside, by id of its node, with fresh
        memos (so a call a memo would answer runs and is seen); the memos and any
        outer trace come back after."""
        saved = self.call_memo, self.statement_memo, self.called
        called: dict[int, PyFunction] = {}
        self.call_memo = CallMemo(self.signatures)
        self.statement_memo, self.called = StatementMemo(), called
        try:
            yield called
        finally:
            self.call_memo, self.statement_memo, self.called = saved

    @contextmanager
    def guarded(self, where: tuple[str, int] = ("", 0)) -> Iterator[None]:
        """A look-up outside any question (a module's name, a class's bases): a
        ``RecursionError`` inside is :class:`LimitExceeded` at ``where``."""
        try:
            yield
        except RecursionError:
            raise LimitExceeded("expression nested too deeply", *where, kind="nesting") from None


__all__ = [
    "STEPS_PER_CELL",
    "STEPS_PER_DECISION",
    "STEPS_PER_PRIORITY_RUN",
    "SAME_GPU",
    "GpuObserver",
    "ObservedCall",
    "Question",
    "QuestionMixin",
    "Return",
]
