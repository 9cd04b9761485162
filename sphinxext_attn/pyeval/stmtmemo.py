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
call memo (:mod:`.callmemo`) does.

Where a GPU observer listens (the selector's table, ``GpuObserver``), an effect
that read the GPU keeps what the observer heard when the statement ran over
remembered calls, and a replay makes it hear that again; an effect kept
without it (recorded where none listened, or on the statement's first run,
which evaluates the calls themselves and is heard call by call) runs again
once, listened to.
"""

from __future__ import annotations

import ast
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any, TypeAlias

from sphinxext_attn.pyeval.bindings import NESTED_SCOPES
from sphinxext_attn.pyeval.scope import Frame
from sphinxext_attn.pyeval.values import (
    CAPABILITY,
    EnumMember,
    External,
    Instance,
    PyClass,
    PyFunction,
    Raised,
    Unknown,
    Value,
    out_of_steps,
)
from sphinxext_attn.source.astwalk import walk

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter

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
NO_KEY = object()
#: A statement recorded this often and replayed less is no longer remembered.
GIVE_UP = 64
#: Builtins that read the calling frame (its first argument, its locals).
_IMPLICIT = frozenset({"super", "locals", "vars", "eval", "exec"})


class _Plan:
    """What one statement reads and writes, from its syntax."""

    __slots__ = ("read_keys", "reads", "sinks", "stores")

    def __init__(self, reads: tuple[str, ...], sinks: tuple[str, ...], stores: tuple[str, ...]):
        self.reads = reads
        self.sinks = sinks
        self.stores = stores
        #: ``reads`` as the keys a frame's record of its lookups takes
        self.read_keys: dict[str, None] = dict.fromkeys(reads)


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


#: a memo key: parts that compare like the values they stand for (:func:`key_part`)
Key: TypeAlias = tuple[Hashable, ...]
#: a remembered effect: the failure (or None), the capability and facts read, the
#: items each list of the frame gained, the stored names' values after, and what
#: the GPU observer heard (None: none listened; see ``GpuObserver.heard``)
Effect: TypeAlias = tuple[
    Exception | None, int, tuple[tuple[Value, ...], ...], tuple[Value, ...], object
]

KEY_PLAIN = frozenset({type(None), bool, int, str})  # floats: see key_part (-0.0)
KEY_KEPT = frozenset({PyClass, EnumMember, External})


def key_part(value: Value, instances: bool = True) -> Hashable:
    """A key part that keeps ``value`` alive and compares like it, or NO_KEY.
    Named-tuple instances are keyed by their items (``instances``); they are
    never replayed as an effect, since the evaluator can set their fields."""
    kind = type(value)
    if kind in KEY_PLAIN:
        return (kind, value)
    if kind is float:
        return (float, value.hex())  # -0.0 == 0.0, yet str() tells them apart
    if kind in KEY_KEPT:
        kept: Hashable = value  # (compared by identity or name)
        return kept
    if kind is PyFunction:
        return NO_KEY if isinstance(value.scope, Frame) else value
    if kind is tuple:
        parts = tuple(key_part(v, instances) for v in value)
        return NO_KEY if any(p is NO_KEY for p in parts) else (tuple, parts)
    if instances and isinstance(value, Instance) and vars(value)["items"] is not None:
        # (its items as stored: keying a GpuInstance does not look at the GPU)
        parts = tuple(key_part(v) for v in vars(value)["items"])
        return NO_KEY if any(p is NO_KEY for p in parts) else (Instance, value.cls, parts)
    return NO_KEY


#: A statement not planned yet (``StatementMemo.plans``).
_UNSEEN: Any = object()
#: An entry whose statement read the device capability: look again with it.
BY_CAPABILITY = (None, True, (), (), None)


class StatementMemo:
    """Per interpreter: plans by statement, and the remembered effects.

    An effect is remembered without the device capability when recording it
    did not read the capability (it is then the same on every GPU), else
    under the capability too."""

    def __init__(self) -> None:
        self.plans: dict[ast.stmt, _Plan | None] = {}
        self.effects: dict[Key, Effect] = {}
        #: the units of each checks body: statements, or runs of flag checks (.checks)
        self.units: dict[int, tuple[list[ast.stmt], list[Any]]] = {}
        #: statement -> [times recorded, times replayed]
        self.counts: dict[ast.stmt, list[int]] = {}

    def plan(self, stmt: ast.stmt) -> _Plan | None:
        if stmt not in self.plans:
            self.plans[stmt] = _plan(stmt)
        return self.plans[stmt]

    def run(self, interp: Interpreter, stmt: ast.stmt, frame: Frame) -> None:
        plan = self.plans.get(stmt, _UNSEEN)
        if plan is _UNSEEN:
            plan = self.plan(stmt)
        if plan is None or type(frame.parent) is Frame:
            interp.exec_stmt(stmt, frame)
            return
        if frame.reads is not None:
            frame.reads.update(plan.read_keys)  # the call memo keys on what was read
        local = frame.locals
        key: list[Hashable] = [stmt, interp.class_writes]
        if not key_parts(key, plan.reads, local):
            interp.exec_stmt(stmt, frame)
            return
        lists = sinks_of(plan.sinks, local)
        if lists is None:
            interp.exec_stmt(stmt, frame)
            return
        base = tuple(key)
        found = self.effects.get(base)
        if found is BY_CAPABILITY:
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
        failure, read, added, after, heard = found
        observer = interp.gpu_observer
        if observer is not None:
            if heard is None and read & CAPABILITY:
                # the observer hears the GPU read where it is: run again, and keep
                # what it heard (a run of remembered calls, as later runs would be)
                self._record(interp, stmt, frame, plan, lists, base, listen=True)
                return
            if heard:
                observer.hear_again(heard)
        counts[1] += 1
        interp.capability_read |= read
        if failure is not None:
            raise failure.with_traceback(None)
        for sink, items in zip(lists, added, strict=True):
            if items:
                sink.extend(items)
        for name, value in zip(plan.stores, after, strict=True):
            if value is NO_KEY:
                local.pop(name, None)
            else:
                local[name] = value

    def remember(self, interp: Interpreter, base: Key, entry: Effect) -> None:
        if entry[1] & CAPABILITY:
            self.effects[base] = BY_CAPABILITY
            self.effects[(*base, interp.capability)] = entry
        else:
            self.effects[base] = entry

    def _record(
        self,
        interp: Interpreter,
        stmt: ast.stmt,
        frame: Frame,
        plan: _Plan,
        lists: list[list[Value]],
        base: Key,
        listen: bool = False,
    ) -> None:
        """Run ``stmt`` and remember its effect; with ``listen``, with what the GPU
        observer heard (not on a first run: the calls it makes for the first time
        are heard where a remembered call is heard whole)."""
        local = frame.locals
        sizes = [len(s) for s in lists]
        before = [local.get(name, NO_KEY) for name in plan.stores]
        saved_read = interp.capability_read
        interp.capability_read = 0
        failure: Exception | None = None
        observer = interp.gpu_observer if listen else None
        token = observer.listen() if observer is not None else None
        try:
            interp.exec_stmt(stmt, frame)
        except (Unknown, Raised) as exc:
            failure = exc
        finally:
            heard = observer.heard(token) if observer is not None else None
        read = interp.capability_read
        interp.capability_read = saved_read | read
        added = tuple(tuple(s[n:]) for s, n in zip(lists, sizes, strict=True))
        after = tuple(local.get(name, NO_KEY) for name in plan.stores)
        entry: Effect | None = None
        if failure is not None:
            changed = any(added) or any(a is not b for a, b in zip(after, before, strict=True))
            budget = out_of_steps(failure)
            if not changed and not budget:
                entry = (failure, read, (), (), heard)
        elif all(key_part(v, False) is not NO_KEY for part in added for v in part) and all(
            v is NO_KEY or key_part(v, False) is not NO_KEY for v in after
        ):
            entry = (None, read, added, after, heard)
        if entry is not None:
            self.remember(interp, base, entry)
        if failure is not None:
            raise failure


def key_parts(key: list[Hashable], names: tuple[str, ...], local: dict[str, Value]) -> bool:
    """Append the key parts of ``names`` (False: a value that cannot be a key)."""
    append = key.append
    for name in names:
        value = local.get(name, NO_KEY)
        if value is NO_KEY:
            append(None)  # a module or builtin name: the same for every call
            continue
        kind = type(value)
        if kind in KEY_PLAIN:
            append((kind, value))
        elif kind in KEY_KEPT:
            append(value)
        else:
            part = key_part(value)
            if part is NO_KEY:
                return False
            append(part)
    return True


def sinks_of(names: tuple[str, ...], local: dict[str, Value]) -> list[list[Value]] | None:
    """The distinct lists the sink names hold, or None."""
    lists: list[list[Value]] = []
    for name in names:
        sink = local.get(name)
        if type(sink) is not list or (lists and any(sink is other for other in lists)):
            return None
        lists.append(sink)
    return lists


def reads_frame(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> bool:
    """A ``def`` or ``lambda`` whose body names ``super``, ``locals`` and the like
    (they read the calling frame itself, not a name in it), or defines a class,
    function or lambda: that can read the frame after the call returned (a class
    made by ``create_composite_backend(...)`` reads its arguments lazily)."""
    body = node.body if isinstance(node.body, list) else [node.body]
    # each statement walked as one list (see source/astwalk.py: ``ast.walk`` runs two
    # generators per node, and every function called is walked once per interpreter)
    for stmt in body:
        for sub in walk(stmt):
            if isinstance(sub, NESTED_SCOPES) or (
                isinstance(sub, ast.Name) and sub.id in _IMPLICIT
            ):
                return True
    return False
