"""Running a list-of-reasons body (``validate_configuration``) check by check.

A check that cannot be evaluated is skipped and recorded, so it does not
hide the others (:meth:`Interpreter.run_lenient` turns a result with no
reason but a skipped check into a ``not evaluated`` one). Each check is
remembered by :class:`~.stmtmemo.StatementMemo`; consecutive checks that read
only flags (parameters annotated ``bool``) and the class are remembered
together as one :class:`_Block`, since their values repeat the most.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from sphinxext_attn.pyeval.scope import Frame
from sphinxext_attn.pyeval.stmtmemo import (
    BY_CAPABILITY,
    NO_KEY,
    StatementMemo,
    key_part,
    key_parts,
    sinks_of,
)
from sphinxext_attn.pyeval.values import Unknown, out_of_steps

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter


def run_checks(
    memo: StatementMemo,
    interp: Interpreter,
    body: list[ast.stmt],
    frame: Frame,
    skipped: list[Unknown],
) -> None:
    """Run a checks body: a check that cannot be evaluated is skipped and
    recorded (``skipped``), unless it is the ``return`` or ran out of budget.
    Consecutive checks that read only flags (parameters annotated ``bool``)
    and the class are remembered together, as one :class:`_Block`."""
    found = memo.units.get(id(body))
    if found is None or found[0] is not body:
        found = memo.units[id(body)] = (body, _units(memo, body, frame))
    for unit in found[1]:
        if type(unit) is _Block:
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
                skipped.append(exc)


def _units(memo: StatementMemo, body: list[ast.stmt], frame: Frame) -> list[Any]:
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
    units: list[Any] = []
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
        self, memo: StatementMemo, interp: Interpreter, frame: Frame, skipped: list[Unknown]
    ) -> bool:
        """True when done (replayed or recorded); False: run the checks one by one."""
        if type(frame.parent) is Frame:
            return False
        local = frame.locals
        key: list[Any] = [self, interp.class_writes]
        lists = sinks_of(self.sinks, local)
        if lists is None or not key_parts(key, self.reads, local):
            return False
        if frame.reads is not None:
            frame.reads.update(dict.fromkeys(self.reads))
        base = tuple(key)
        found = memo.effects.get(base)
        if found is BY_CAPABILITY:
            found = memo.effects.get((*base, interp.capability))
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
                    skipped.append(exc)
                    complete = False
        finally:
            read = interp.capability_read
            interp.capability_read = saved_read | read
        added = tuple(tuple(s[n:]) for s, n in zip(lists, sizes, strict=True))
        if complete and all(key_part(v, False) is not NO_KEY for part in added for v in part):
            memo.remember(interp, base, (None, read, added, ()))
        return True
