"""A backend's reasons from its own check, where the platform's loop only passes
the configuration through.

A question of the selector's table (:meth:`.Prober.reasons`) evaluates the
platform's ``get_valid_backends`` with a one-backend priority list. Most of its
cost is that loop, not the backend's ``validate_configuration``. Where the
loop is written so that the configuration reaches nothing but that call
(:func:`passed_through`: each configuration parameter is read only as an
argument of the priority function, which the question answers by a stand-in,
or as ``name=param`` / ``**param._asdict()`` of the one ``validate_configuration``
call), the loop does the same for every configuration except through what
the check returns. So its answer is a function of the check's list of
reasons: once a full question has shown what the loop makes of one list
(:meth:`PassThrough.recording`), a later question whose check returns the same
list (on the same GPU, engine options and class state) gets that answer, the
machine facts the loop read added, without running the loop
(:meth:`PassThrough.answer`). Anything else (a check that raises, a list not
seen, reasons that are not plain text) is asked in full.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sphinxext_attn.knowledge.machine import machine_of
from sphinxext_attn.model.selection import Config
from sphinxext_attn.pyeval import (
    MISSING,
    NOT_EVALUATED,
    STEPS_PER_DECISION,
    Bound,
    EnumMember,
    Frame,
    Instance,
    ModuleScope,
    PyFunction,
    Raised,
    Unknown,
)
from sphinxext_attn.selector.checks import CHECK_METHOD
from sphinxext_attn.selector.passthrough_loop import Loop, passed_through

if TYPE_CHECKING:
    from sphinxext_attn.pyeval import Interpreter
    from sphinxext_attn.selection.decision import Selector

#: the key of the outcome of every list of reasons, in a loop that keeps it whole
WHOLE = ("(any reasons)",)
#: where a check answers alike: the backend, the GPU and the engine options
Where = tuple[str, tuple[int, int], str]
#: a question answered without the loop must stay this far inside its step budget
#: (the loop's own steps, as recorded, added): near the limit it is asked in full
STEP_MARGIN = STEPS_PER_DECISION // 2


@dataclass
class _Seen:
    """What one full question showed: the check its loop called, and what the loop
    read and answered around it."""

    calls: int = 0
    #: calls under way between the loop and this point (a check must be the loop's own)
    depth: int = 0
    func: PyFunction | None = None
    args: list[object] = field(default_factory=list)
    result: object = None
    #: machine facts (bits) the loop read before the check, and the check's own
    before: int = 0
    body: int = 0
    body_steps: int = 0
    writes: int = 0


class PassThrough:
    """Answers of one prober's questions from the backend's check alone (see the
    module docstring); None wherever the question must be asked in full."""

    def __init__(self, selector: Selector, module: ModuleScope) -> None:
        self.selector = selector
        self.interp: Interpreter = selector.interp
        self.module = module
        #: the check call of each ``get_valid_backends`` (None: it does more)
        self._calls: dict[int, Loop | None] = {}
        #: per backend, GPU, engine options and class writes (a class set anew may
        #: hold another check): the check function and its class
        self._checks: dict[tuple[str, tuple[int, int], str, int], tuple[PyFunction, list[object]]]
        self._checks = {}
        #: per check and reasons: the answer, the facts the loop read, its steps
        self._outcomes: dict[tuple[Where, int, tuple[str, ...]], tuple[tuple[str, ...], int, int]]
        self._outcomes = {}
        #: the platform's loop was found to do more than pass the configuration on
        self.refused = False
        #: the check's keywords by the loop's arguments (see :meth:`_keywords`)
        self._named: dict[tuple[int, ...], tuple[tuple[object, ...], dict[str, object]]] = {}

    def _loop_of(self, method: Bound) -> Loop | None:
        func = getattr(method, "func", None)
        if not isinstance(func, PyFunction) or func.module is not self.module:
            return None  # the stand-in answers in this module only
        key = id(func.node)
        if key not in self._calls:
            self._calls[key] = passed_through(func.node)
        return self._calls[key]

    def _where(self, backend: str, config: Config) -> Where:
        machine = machine_of(self.interp)
        options = tuple(sorted(machine.environment.options.items(), key=repr))
        return (backend, config.capability_tuple, repr(options))

    def answer(
        self, backend: str, config: Config, method: Bound, kwargs: dict[str, object]
    ) -> tuple[str, ...] | None:
        """The reasons, from the check alone, inside the question being asked; None
        when it must be asked in full (the caller then asks it again in a fresh
        step budget: what was read so far, the full question reads too)."""
        where = self._where(backend, config)
        check = self._checks.get((*where, self.interp.class_writes))
        if check is None or self.refused:
            return None
        loop = self._loop_of(method)
        if loop is None:
            self.refused = True  # the loop does more than pass the configuration on
            return None
        interp = self.interp
        budget = interp.budget
        steps, writes = budget.steps, interp.class_writes
        try:
            named = self._keywords(method, kwargs, loop)
            func, args = check
            result = interp.invoke(func, list(args), named, loop.call)
        except (Unknown, Raised, RecursionError):
            return None
        if interp.class_writes != writes:
            return None
        key = _reasons_key(result)
        if key is None:
            return None
        found = self._outcomes.get((where, writes, key))
        if found is None and loop.whole and _plain(key):
            found = self._outcomes.get((where, writes, WHOLE))
            found = found and (key, *found[1:])  # (the list itself, as the example's)
        if found is None:
            return None
        reasons, read, loop_steps = found
        if steps - budget.steps + loop_steps > STEP_MARGIN:
            return None
        interp.read_gpu(read)
        return reasons

    def _keywords(self, method: Bound, kwargs: dict[str, object], loop: Loop) -> dict[str, object]:
        """The keywords the loop passes the check, evaluated as its call does; kept
        per the loop's arguments (the selector config and the GPU's are made once
        per configuration and never changed) where evaluating them read nothing."""
        interp = self.interp
        values = (method.func, *(kwargs.get(name, MISSING) for name in loop.passed))
        key = (*map(id, values), interp.class_writes)
        kept = self._named.get(key)
        if kept is not None:
            return dict(kept[1])
        with interp.question(steps=None) as evaluating:
            named = self._evaluated(method, kwargs, loop.call)
        if not evaluating.read:
            self._named[key] = (values, dict(named))  # (the values kept: their ids stay theirs)
        return named

    def _evaluated(
        self, method: Bound, kwargs: dict[str, object], call: ast.Call
    ) -> dict[str, object]:
        interp = self.interp
        func = method.func
        target = method.target
        if func.kind == "classmethod" and isinstance(target, Instance | EnumMember):
            target = target.cls
        frame = Frame(func.module, func.scope, func=func if func.owner else None)
        interp.bind_args(func, func.node.args, [target], kwargs, frame)
        named: dict[str, object] = {}
        for kw in call.keywords:
            value = interp.eval(kw.value, frame)
            items = value if kw.arg is None else {kw.arg: value}
            if not isinstance(items, dict):
                raise Unknown("** of a non-dict")
            for name, item in items.items():
                if not isinstance(name, str) or name in named:
                    raise Unknown("keywords the loop would refuse")
                named[name] = item
        return named

    @contextmanager
    def recording(
        self, backend: str, config: Config
    ) -> Iterator[Callable[[tuple[str, ...]], None]]:
        """Around a full question: note the check its loop calls and what the loop
        read; the caller reports the answer through the function yielded."""
        interp = self.interp
        seen = _Seen()
        before_watcher = interp.call_watcher

        def invoke(
            func: PyFunction, args: list[object], kwargs: dict[str, object], node: ast.AST
        ) -> object:
            return interp.invoke(func, args, kwargs, node, watched=False)

        start = interp.budget.steps
        loaded = len(interp.modules), len(interp.tree.files)
        outside, interp.capability_read = interp.capability_read, 0  # the loop's, apart

        def watched(
            func: PyFunction, args: list[object], kwargs: dict[str, object], node: ast.AST
        ) -> object:
            if func.name != CHECK_METHOD or seen.calls or seen.depth:
                # a second check, or one the loop does not call itself: no example
                seen.calls += func.name == CHECK_METHOD
                seen.depth += 1
                try:
                    return invoke(func, args, kwargs, node)
                finally:
                    seen.depth -= 1
            seen.calls = 1
            seen.func, seen.args, seen.writes = func, list(args), interp.class_writes
            seen.before, interp.capability_read = interp.capability_read, 0
            steps = interp.budget.steps
            interp.call_watcher = None  # (inner calls: the check's own)
            try:
                seen.result = invoke(func, args, kwargs, node)
            except BaseException:
                seen.calls = 2  # not taken as an example
                interp.capability_read |= seen.before
                raise
            finally:
                interp.call_watcher = watched
            seen.body, seen.body_steps = interp.capability_read, steps - interp.budget.steps
            interp.capability_read = 0  # the loop's reads after the check, apart
            return seen.result

        answered: list[tuple[str, ...]] = []
        interp.call_watcher = watched
        try:
            yield answered.append
        finally:
            interp.call_watcher = before_watcher
            if seen.calls != 1:
                interp.capability_read |= outside
            else:
                after = interp.capability_read
                interp.capability_read = outside | seen.before | seen.body | after
                if loaded == (len(interp.modules), len(interp.tree.files)):  # (a first
                    # load reads what later questions do not)
                    self._learn(backend, config, seen, answered, seen.before | after, start)

    def _learn(
        self,
        backend: str,
        config: Config,
        seen: _Seen,
        answered: list[tuple[str, ...]],
        loop_read: int,
        start: int,
    ) -> None:
        key = _reasons_key(seen.result)
        if len(answered) != 1 or key is None or seen.func is None or self.refused:
            return
        where = self._where(backend, config)
        known = self._checks.setdefault((*where, seen.writes), (seen.func, seen.args))
        if known[0] is not seen.func or known[1] != seen.args:
            return
        loop_steps = start - self.interp.budget.steps - seen.body_steps
        outcome = (answered[0], loop_read, loop_steps)
        self._outcomes[(where, seen.writes, key)] = outcome
        if _plain(key) and answered[0] == key:  # the answer is the list itself
            self._outcomes.setdefault((where, seen.writes, WHOLE), outcome)


def _plain(key: tuple[str, ...]) -> bool:
    """Reasons a loop that keeps the list whole passes on as they are: some, none
    saying the check was not evaluated (the answer then reads them otherwise)."""
    return bool(key) and not any(r.startswith(NOT_EVALUATED) for r in key)


def _reasons_key(result: object) -> tuple[str, ...] | None:
    """The check's answer as a key: a list of plain strings only."""
    if type(result) is not list or any(type(r) is not str for r in result):
        return None
    return tuple(result)


__all__ = ["PassThrough"]
