"""Running a list-of-reasons body (``validate_configuration``) check by check.

A check that cannot be evaluated is skipped and recorded with the sizes of
the frame's lists at that moment, so it does not hide the others and
:meth:`Interpreter.run_lenient` can put a ``not evaluated`` reason where the
check's own reason would have been appended. Each check is
remembered by :class:`~.stmtmemo.StatementMemo`; consecutive checks that read
only flags (parameters annotated ``bool``) and the class are remembered
together as one :class:`_Block`, since their values repeat the most.
"""

from __future__ import annotations

import ast
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval.bindings import opaque_names
from sphinxext_attn.pyeval.scope import Frame, SkippedBinding
from sphinxext_attn.pyeval.stmtmemo import (
    BY_CAPABILITY,
    NO_KEY,
    StatementMemo,
    key_part,
    key_parts,
    sinks_of,
)
from sphinxext_attn.pyeval.values import CAPABILITY, Unknown, Value, out_of_steps

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter


@dataclass
class SkippedChecks:
    """The checks of one run that could not be evaluated, in order, each with the
    lists of the frame and their sizes when it was skipped (its place in them)."""

    unknowns: list[Unknown] = field(default_factory=list)
    places: list[tuple[tuple[list[Value], int], ...]] = field(default_factory=list)

    def add(self, exc: Unknown, frame: Frame) -> None:
        if any(seen is exc for seen in self.unknowns):
            return  # a later check reading a skipped assignment's name
        self.unknowns.append(exc)
        self.places.append(tuple((v, len(v)) for v in frame.locals.values() if type(v) is list))

    def gaps(self, reasons: list[Value]) -> list[tuple[int, Unknown]]:
        """Where in ``reasons`` each skipped check stood (its end when ``reasons``
        is no list of the frame), one per place: checks skipped with no reason
        appended between them leave one gap, named by the first."""
        found: dict[int, Unknown] = {}
        for exc, place in zip(self.unknowns, self.places, strict=True):
            at = next((n for lst, n in place if lst is reasons), len(reasons))
            found.setdefault(at, exc)
        return sorted(found.items(), key=lambda item: item[0])


def run_checks(
    memo: StatementMemo,
    interp: Interpreter,
    body: list[ast.stmt],
    frame: Frame,
    skipped: SkippedChecks,
) -> None:
    """Run a checks body: a check that cannot be evaluated is skipped and
    recorded (``skipped``), unless it is the ``return`` or ran out of budget.
    Consecutive checks that read only flags (parameters annotated ``bool``)
    and the class are remembered together, as one :class:`_Block`."""
    found = memo.units.get(id(body))
    if found is None or found[0] is not body:
        found = memo.units[id(body)] = (body, _units(memo, body, frame))
    for unit in found[1]:
        if isinstance(unit, _Block):
            if unit.run(memo, interp, frame, skipped):
                continue
            stmts = unit.stmts
        else:
            stmts = (unit,)
        for stmt in stmts:
            try:
                memo.run(interp, stmt, frame)
            except Unknown as exc:
                if out_of_steps(exc) or isinstance(stmt, ast.Return):
                    raise
                skipped.add(exc, frame)
                for name in opaque_names(stmt):
                    frame.locals[name] = SkippedBinding(exc)


def _units(memo: StatementMemo, body: list[ast.stmt], frame: Frame) -> list[ast.stmt | _Block]:
    func = frame.func
    node = getattr(func, "node", None)
    if not isinstance(node, ast.FunctionDef):
        return list(body)
    spec = node.args
    params = [*spec.posonlyargs, *spec.args, *spec.kwonlyargs]
    flags = {
        a.arg for a in params if isinstance(a.annotation, ast.Name) and a.annotation.id == "bool"
    }
    if params:
        flags.add(params[0].arg)  # the class (or instance) every check asks
    units: list[ast.stmt | _Block] = []
    run: list[ast.stmt] = []
    run_sinks: tuple[str, ...] = ()  # of the run's first check

    def close() -> None:
        if len(run) > 1:
            units.append(_Block(tuple(run), memo))
        else:
            units.extend(run)
        run.clear()

    for stmt in body:
        plan = memo.plan(stmt)
        fits = plan is not None and not plan.stores and set(plan.reads) <= flags
        if plan is not None and fits and run and run_sinks != plan.sinks:
            close()
        if plan is not None and fits:
            if not run:
                run_sinks = plan.sinks
            run.append(stmt)
        else:
            close()
            units.append(stmt)
    close()
    return units


class _Block:
    """Consecutive flag checks remembered together: keyed by the values of every
    name they read, their effect is what they appended. A run in which a check
    could not be evaluated is not remembered (its checks run one by one)."""

    def __init__(self, stmts: tuple[ast.stmt, ...], memo: StatementMemo) -> None:
        self.stmts = stmts
        plans = [p for p in map(memo.plan, stmts) if p is not None]  # each a flag check
        self.reads = tuple(sorted({n for p in plans for n in p.reads}))
        self.sinks = plans[0].sinks

    def run(
        self, memo: StatementMemo, interp: Interpreter, frame: Frame, skipped: SkippedChecks
    ) -> bool:
        """True when done (replayed or recorded); False: run the checks one by one."""
        if type(frame.parent) is Frame:
            return False
        local = frame.locals
        key: list[Hashable] = [self, interp.class_writes]
        lists = sinks_of(self.sinks, local)
        if lists is None or not key_parts(key, self.reads, local):
            return False
        if frame.reads is not None:
            frame.reads.update(dict.fromkeys(self.reads))
        base = tuple(key)
        found = memo.effects.get(base)
        if found is BY_CAPABILITY:
            found = memo.effects.get((*base, interp.capability))
        if found is not None and found[1] & CAPABILITY and interp.gpu_observer is not None:
            return False  # (one by one: the observer hears the GPU read where it is)
        if found is not None:
            interp.capability_read |= found[1]
            for sink, items in zip(lists, found[2], strict=True):
                if items:
                    sink.extend(items)
            return True
        sizes = [len(s) for s in lists]
        saved_read = interp.capability_read
        interp.capability_read = 0
        complete = True
        try:
            for stmt in self.stmts:
                try:
                    memo.run(interp, stmt, frame)
                except Unknown as exc:
                    if out_of_steps(exc):
                        raise
                    skipped.add(exc, frame)
                    complete = False
        finally:
            read = interp.capability_read
            interp.capability_read = saved_read | read
        added = tuple(tuple(s[n:]) for s, n in zip(lists, sizes, strict=True))
        if complete and all(key_part(v, False) is not NO_KEY for part in added for v in part):
            memo.remember(interp, base, (None, read, added, (), None))
        return True
