"""Memoised statements of list-of-reasons functions (``validate_configuration``).

Such a body is a run of independent checks, each ``if <test>:
reasons.append("...")``. Asked for hundreds of configurations, most checks
see the same few values (``has_sink`` is False, the class is the same), so
each top-level statement is remembered by the values it reads:

- the key is the statement, the device capability, the count of class
  attribute writes so far, and the value of every local name the statement
  loads or binds (plain values, and classes, enum members and names from
  outside the tree, which the key holds so their identity stays theirs); a
  local that is mutable or a closure makes the statement run as usual;
- its effect is what it appended to local lists used only as ``.append`` /
  ``.extend`` receivers, and the immutable values it bound to local names;
  anything else (an attribute or item set, a nested ``def``, ``return``,
  ``super()``) is not memoised, nor is a statement whose effect is not
  immutable data.

Called functions are taken to answer the same for the same arguments, as the
call memo (:mod:`.calls`) already does.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from sphinxext_attn.core.pyeval.scope import Frame
from sphinxext_attn.core.pyeval.values import (
    EnumMember,
    External,
    Instance,
    PyClass,
    PyFunction,
    Raised,
    Unknown,
)

if TYPE_CHECKING:
    from sphinxext_attn.core.pyeval.interp import Interpreter

#: List methods whose receiver is a write-only sink of a checks body.
SINK_METHODS = frozenset({"append", "extend"})
#: Statements and expressions whose effects are not tracked here.
_UNTRACKED = (
    ast.Return,
    ast.Break,
    ast.Continue,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Lambda,
    ast.NamedExpr,
    ast.Global,
    ast.Nonlocal,
    ast.Delete,
    ast.Import,
    ast.ImportFrom,
    ast.Yield,
    ast.YieldFrom,
    ast.Await,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
_NO = object()
#: A statement recorded this often and replayed less is no longer remembered.
GIVE_UP = 64
#: Builtins that read the calling frame (its first argument, its locals).
_IMPLICIT = frozenset({"super", "locals", "vars", "eval", "exec"})


class _Plan:
    """What one statement reads and writes, from its syntax."""

    __slots__ = ("reads", "sinks", "stores")

    def __init__(self, reads: tuple[str, ...], sinks: tuple[str, ...], stores: tuple[str, ...]):
        self.reads = reads
        self.sinks = sinks
        self.stores = stores


def _plan(stmt: ast.stmt) -> _Plan | None:
    """None when the statement may have effects this memo does not replay."""
    sinks: set[str] = set()
    receivers: set[int] = set()
    for node in ast.walk(stmt):
        if isinstance(node, _UNTRACKED):
            return None
        if isinstance(node, ast.Attribute | ast.Subscript | ast.Starred) and not isinstance(
            node.ctx, ast.Load
        ):
            return None
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in SINK_METHODS
            and isinstance(node.func.value, ast.Name)
        ):
            sinks.add(node.func.value.id)
            receivers.add(id(node.func.value))
    reads: set[str] = set()
    stores: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.ExceptHandler) and node.name:
            stores.add(node.name)
        if isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load):
                stores.add(node.id)
            elif id(node) not in receivers:
                reads.add(node.id)
    if sinks & (reads | stores) or reads & _IMPLICIT:
        return None  # a sink also read or rebound; names that read the frame itself
    return _Plan(tuple(sorted(reads | stores)), tuple(sorted(sinks)), tuple(sorted(stores)))


_PLAIN = frozenset({type(None), bool, int, float, str})
_KEPT = frozenset({PyClass, EnumMember, External})


def _frozen(value: Any, instances: bool = True) -> Any:
    """A key part that keeps ``value`` alive and compares like it, or _NO.
    Named-tuple instances are keyed by their items (``instances``); they are
    never replayed as an effect, since the evaluator can set their fields."""
    kind = type(value)
    if kind in _PLAIN:
        return (kind, value)
    if kind in _KEPT:
        return value
    if kind is PyFunction:
        return _NO if isinstance(value.scope, Frame) else value
    if kind is tuple:
        parts = tuple(_frozen(v, instances) for v in value)
        return _NO if any(p is _NO for p in parts) else (tuple, parts)
    if instances and kind is Instance and value.items is not None:
        parts = tuple(_frozen(v) for v in value.items)
        return _NO if any(p is _NO for p in parts) else (Instance, value.cls, parts)
    return _NO


#: An entry whose statement read the device capability: look again with it.
_BY_CAPABILITY = (None, True, (), ())


class StatementMemo:
    """Per interpreter: plans by statement, and the remembered effects.

    An effect is remembered without the device capability when recording it
    did not read the capability (it is then the same on every GPU), else
    under the capability too."""

    def __init__(self) -> None:
        self.plans: dict[ast.stmt, _Plan | None] = {}
        self.effects: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        #: the units of each checks body: statements, or runs of flag checks
        self.units: dict[int, tuple[list[ast.stmt], list[Any]]] = {}
        #: statement -> [times recorded, times replayed]
        self.counts: dict[ast.stmt, list[int]] = {}

    def plan(self, stmt: ast.stmt) -> _Plan | None:
        plan = self.plans.get(stmt, _NO)
        if plan is _NO:
            plan = self.plans[stmt] = _plan(stmt)
        return plan  # type: ignore[return-value]

    def run_checks(
        self, interp: Interpreter, body: list[ast.stmt], frame: Frame, skipped: list[Unknown]
    ) -> None:
        """Run a checks body: a check that cannot be evaluated is skipped and
        recorded (``skipped``), unless it is the ``return`` or ran out of budget.
        Consecutive checks that read only flags (parameters annotated ``bool``)
        and the class are remembered together, as one :class:`_Block`."""
        found = self.units.get(id(body))
        if found is None or found[0] is not body:
            found = self.units[id(body)] = (body, self._units(body, frame))
        for unit in found[1]:
            if type(unit) is _Block:
                if unit.run(self, interp, frame, skipped):
                    continue
                stmts = unit.stmts
            else:
                stmts = (unit,)
            for stmt in stmts:
                try:
                    self.run(interp, stmt, frame)
                except Unknown as exc:
                    if "budget" in exc.reason or isinstance(stmt, ast.Return):
                        raise
                    skipped.append(exc)

    def _units(self, body: list[ast.stmt], frame: Frame) -> list[Any]:
        func = frame.func
        node = getattr(func, "node", None)
        if not isinstance(node, ast.FunctionDef):
            return list(body)
        spec = node.args
        params = [*spec.posonlyargs, *spec.args, *spec.kwonlyargs]
        flags = {
            a.arg
            for a in params
            if isinstance(a.annotation, ast.Name) and a.annotation.id == "bool"
        }
        if params:
            flags.add(params[0].arg)  # the class (or instance) every check asks
        units: list[Any] = []
        run: list[ast.stmt] = []

        def close() -> None:
            if len(run) > 1:
                units.append(_Block(tuple(run), self))
            else:
                units.extend(run)
            run.clear()

        for stmt in body:
            plan = self.plan(stmt)
            fits = plan is not None and not plan.stores and set(plan.reads) <= flags
            if fits and run and self.plan(run[0]).sinks != plan.sinks:  # type: ignore[union-attr]
                close()
            if fits:
                run.append(stmt)
            else:
                close()
                units.append(stmt)
        close()
        return units

    def run(self, interp: Interpreter, stmt: ast.stmt, frame: Frame) -> None:
        plan = self.plan(stmt)
        if plan is None or type(frame.parent) is Frame:
            interp.exec_stmt(stmt, frame)
            return
        if frame.reads is not None:
            frame.reads.update(plan.reads)  # the call memo keys on what was read
        local = frame.locals
        key: list[Any] = [stmt, interp.class_writes]
        if not _key_parts(key, plan.reads, local):
            interp.exec_stmt(stmt, frame)
            return
        lists = _sinks(plan.sinks, local)
        if lists is None:
            interp.exec_stmt(stmt, frame)
            return
        base = tuple(key)
        found = self.effects.get(base)
        if found is _BY_CAPABILITY:
            found = self.effects.get((*base, interp.capability))
        counts = self.counts.get(stmt)
        if counts is None:
            counts = self.counts[stmt] = [0, 0]
        if found is None:
            counts[0] += 1
            if counts[0] > GIVE_UP and counts[1] < counts[0]:
                self.plans[stmt] = None  # its values rarely repeat: just run it
            self._record(interp, stmt, frame, plan, lists, base)
            return
        counts[1] += 1
        failure, read, added, after = found
        if read:
            interp.capability_read = True
        if failure is not None:
            raise failure.with_traceback(None)
        for sink, items in zip(lists, added, strict=True):
            if items:
                sink.extend(items)
        for name, value in zip(plan.stores, after, strict=True):
            if value is _NO:
                local.pop(name, None)
            else:
                local[name] = value

    def remember(self, interp: Interpreter, base: tuple[Any, ...], entry: tuple[Any, ...]) -> None:
        if entry[1]:
            self.effects[base] = _BY_CAPABILITY
            self.effects[(*base, interp.capability)] = entry
        else:
            self.effects[base] = entry

    def _record(
        self,
        interp: Interpreter,
        stmt: ast.stmt,
        frame: Frame,
        plan: _Plan,
        lists: list[list[Any]],
        base: tuple[Any, ...],
    ) -> None:
        local = frame.locals
        sizes = [len(s) for s in lists]
        before = [local.get(name, _NO) for name in plan.stores]
        saved_read = interp.capability_read
        interp.capability_read = False
        failure: Exception | None = None
        try:
            interp.exec_stmt(stmt, frame)
        except (Unknown, Raised) as exc:
            failure = exc
        read = interp.capability_read
        interp.capability_read = saved_read or read
        added = tuple(tuple(s[n:]) for s, n in zip(lists, sizes, strict=True))
        after = tuple(local.get(name, _NO) for name in plan.stores)
        entry: tuple[Any, ...] | None = None
        if failure is not None:
            changed = any(added) or any(a is not b for a, b in zip(after, before, strict=True))
            budget = isinstance(failure, Unknown) and "budget" in failure.reason
            if not changed and not budget:
                entry = (failure, read, (), ())
        elif all(_frozen(v, False) is not _NO for part in added for v in part) and all(
            v is _NO or _frozen(v, False) is not _NO for v in after
        ):
            entry = (None, read, added, after)
        if entry is not None:
            self.remember(interp, base, entry)
        if failure is not None:
            raise failure


def _key_parts(key: list[Any], names: tuple[str, ...], local: dict[str, Any]) -> bool:
    """Append the key parts of ``names`` (False: a value that cannot be a key)."""
    append = key.append
    for name in names:
        value = local.get(name, _NO)
        if value is _NO:
            append(None)  # a module or builtin name: the same for every call
            continue
        kind = type(value)
        if kind in _PLAIN:
            append((kind, value))
        elif kind in _KEPT:
            append(value)
        else:
            part = _frozen(value)
            if part is _NO:
                return False
            append(part)
    return True


def _sinks(names: tuple[str, ...], local: dict[str, Any]) -> list[list[Any]] | None:
    """The distinct lists the sink names hold, or None."""
    lists = [local.get(name) for name in names]
    for i, sink in enumerate(lists):
        if type(sink) is not list or any(sink is other for other in lists[:i]):
            return None
    return lists


class _Block:
    """Consecutive flag checks remembered together: keyed by the values of every
    name they read, their effect is what they appended. A run in which a check
    could not be evaluated is not remembered (its checks run one by one)."""

    def __init__(self, stmts: tuple[ast.stmt, ...], memo: StatementMemo) -> None:
        self.stmts = stmts
        plans = [memo.plan(s) for s in stmts]
        self.reads = tuple(sorted({n for p in plans for n in p.reads}))  # type: ignore[union-attr]
        self.sinks = plans[0].sinks  # type: ignore[union-attr]

    def run(
        self, memo: StatementMemo, interp: Interpreter, frame: Frame, skipped: list[Unknown]
    ) -> bool:
        """True when done (replayed or recorded); False: run the checks one by one."""
        if type(frame.parent) is Frame:
            return False
        local = frame.locals
        key: list[Any] = [self, interp.class_writes]
        lists = _sinks(self.sinks, local)
        if lists is None or not _key_parts(key, self.reads, local):
            return False
        if frame.reads is not None:
            frame.reads.update(self.reads)
        base = tuple(key)
        found = memo.effects.get(base)
        if found is _BY_CAPABILITY:
            found = memo.effects.get((*base, interp.capability))
        if found is not None:
            if found[1]:
                interp.capability_read = True
            for sink, items in zip(lists, found[2], strict=True):
                if items:
                    sink.extend(items)
            return True
        sizes = [len(s) for s in lists]
        saved_read = interp.capability_read
        interp.capability_read = False
        complete = True
        try:
            for stmt in self.stmts:
                try:
                    memo.run(interp, stmt, frame)
                except Unknown as exc:
                    if "budget" in exc.reason:
                        raise
                    skipped.append(exc)
                    complete = False
        finally:
            read = interp.capability_read
            interp.capability_read = saved_read or read
        added = tuple(tuple(s[n:]) for s, n in zip(lists, sizes, strict=True))
        if complete and all(_frozen(v, False) is not _NO for part in added for v in part):
            memo.remember(interp, base, (None, read, added, ()))
        return True


def reads_frame(node: Any) -> bool:
    """A ``def`` or ``lambda`` whose body names ``super``, ``locals`` and the like
    (they read the calling frame itself, not a name in it)."""
    body = node.body if isinstance(node.body, list) else [node.body]
    return any(
        isinstance(sub, ast.Name) and sub.id in _IMPLICIT
        for stmt in body
        for sub in ast.walk(stmt)
    )
