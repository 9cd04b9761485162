"""Where names come from: module namespaces, function frames and class bodies.

Nothing is executed ahead of time. A module's names are indexed once (the
statements that bind each one, see :mod:`.bindings`);
a name is evaluated the first time it is looked up, like astroid infers
lazily. Module-level code that would run at import (logging setup, kernel
registration) is never evaluated unless a question needs a name it binds.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval.bindings import (
    Binding,
    bound_names,
    index_bindings,
    live_binding,
)
from sphinxext_attn.pyeval.lazyclass import class_of_chunk, class_piece_names
from sphinxext_attn.pyeval.mutations import changed_at_import, rebound_at_import
from sphinxext_attn.pyeval.values import (
    CAPABILITY,
    Instance,
    LimitExceeded,
    PyClass,
    PyFunction,
    Raised,
    Unbound,
    Unknown,
    Value,
    line_of,
)
from sphinxext_attn.source.chunks import Chunk, ChunkError, chunk_names
from sphinxext_attn.source.recording import ReadLog

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter

_PENDING = object()


class Scope:
    """Base of the three kinds of namespace."""

    module: ModuleScope

    def lookup(self, name: str, interp: Interpreter, node: ast.AST) -> Value:
        raise NotImplementedError


@dataclass(eq=False)
class ModuleScope(Scope):
    """A module of the tree: its dotted name, file and lazily evaluated names."""

    dotted: str
    path: str
    #: the file's top-level statements, or None to use the whole-file parse
    chunks: list[Chunk] | None
    #: parses the whole file when a piece does not parse alone
    reparse: Callable[[], ast.Module | None]
    index: dict[str, list[Binding]] = field(default_factory=dict)
    values: dict[str, Value] = field(default_factory=dict)
    #: owner name -> module-level statements setting its attributes (see attrsets)
    settings: dict[str, list[Value]] | None = None
    #: name -> line of module-level code that may change its value (see mutations)
    changes: dict[str, int] = field(default_factory=dict)
    #: whether any top-level piece holds the word ``global`` (None: not looked)
    has_global: bool | None = None
    #: indexes by file, shared by the interpreters of one tree's pieces
    indexes: dict[str, dict[str, list[Binding]]] | None = None
    #: the read log of the tree the module was loaded from (what its scans read)
    log: ReadLog = field(default_factory=ReadLog)

    def __post_init__(self) -> None:
        self.module = self
        try:
            self.index = self._chunk_index() if self.chunks is not None else {}
        except ChunkError:
            self.chunks = None
        if self.chunks is None:
            self._whole()

    def _chunk_index(self) -> dict[str, list[Binding]]:
        """The index of the file's pieces: built once for the interpreters of a run
        (it depends on the text alone, and nothing changes it)."""
        if not self.chunks:
            return {}
        if self.indexes is None:
            return self._build_index()
        index = self.indexes.get(self.path)
        if index is None:
            index = self.indexes[self.path] = self._build_index()
        return index

    def _build_index(self) -> dict[str, list[Binding]]:
        index: dict[str, list[Binding]] = {}
        for chunk in self.chunks or []:
            # not noted as read: the file's outline (source/views.py) holds what counts
            text = chunk.unnoted()
            names = chunk_names(chunk)
            if names is None and ":=" in text:
                names = class_piece_names(chunk)
            if names is None:
                nodes = chunk.nodes(noted=False)
                for name, found in index_bindings(nodes, True, ":=" in text).items():
                    index.setdefault(name, []).extend(found)
            else:
                for name in names:
                    index.setdefault(name, []).append(Binding(chunk, ()))  # type: ignore[arg-type,unused-ignore]
        return index

    def _whole(self) -> None:
        module = self.reparse()
        if module is None:
            raise Unknown(f"module {self.dotted} cannot be parsed", self.path)
        self.index = index_bindings(module.body, nested=True)
        self.chunks = None

    def statement(self, binding: Binding, name: str) -> ast.stmt:
        """The parsed statement of a binding (parsing its piece if need be)."""
        stmt: ast.stmt | Chunk = binding.stmt
        if not isinstance(stmt, Chunk):
            return stmt
        lazy = class_of_chunk(stmt, name, lambda: self._whole_class(name, stmt.line))
        if lazy is not None:
            return lazy
        for node in stmt.nodes():
            if name in bound_names(node):
                return node
        raise ChunkError(self.path)

    def _whole_class(self, name: str, line: int) -> ast.ClassDef | None:
        module = self.reparse()
        for node in module.body if module is not None else []:
            if isinstance(node, ast.ClassDef) and node.name == name:
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                if first == line:
                    return node
        return None

    @property
    def has_walrus(self) -> bool:
        """Whether the file may hold ``:=`` (unknown when read whole: yes)."""
        if self.chunks is None:
            return True
        self.log.note(self.path, ("mention", ":="))
        return any(":=" in chunk.unnoted() for chunk in self.chunks)

    def class_nodes(self) -> list[ast.ClassDef]:
        """The module's class statements (a piece that does not parse alone: the
        whole file, or :class:`Unknown` when that does not parse either)."""
        out = []
        if self.chunks is not None:
            self.log.note(self.path, ("mention", "class "))
        for bindings in self.index.values():
            for binding in bindings:
                stmt: Value = binding.stmt
                if isinstance(stmt, Chunk) and stmt.unnoted().startswith("class "):
                    try:
                        out += [n for n in stmt.nodes() if isinstance(n, ast.ClassDef)]
                    except ChunkError:
                        self._whole()
                        return self.class_nodes()
                elif isinstance(stmt, ast.ClassDef):
                    out.append(stmt)
        return sorted(set(out), key=lambda n: n.lineno)

    def has(self, name: str) -> bool:
        return name in self.index

    def lookup(self, name: str, interp: Interpreter, node: ast.AST) -> Value:
        value = cached(self.values, name, interp)
        if value is _PENDING:
            raise LimitExceeded(
                f"{name} is defined in terms of itself", self.path, _line(node), kind="cycle"
            )
        if value is not MISSING:
            return value
        if name not in self.index:
            return interp.builtin(name, self, node)
        remember(self.values, name, interp, _PENDING)
        try:
            return remember(self.values, name, interp, lambda: self._evaluate(name, interp))
        except BaseException:  # (also the abstract string's Concretize)
            forget(self.values, name, interp)
            raise

    def _evaluate(self, name: str, interp: Interpreter) -> Value:
        binding = live_binding(self.index[name], interp, self, self.path)
        if binding is None:
            raise Unbound(f"{name} is never bound when the module runs", self.path)
        try:
            stmt = self.statement(binding, name)
        except ChunkError:
            self._whole()
            return self._evaluate(name, interp)
        value = interp.bind_statement(stmt, name, self)
        container = isinstance(value, list | dict | set)
        made_here = isinstance(stmt, ast.Assign | ast.AnnAssign)  # not an import
        if made_here and (container or (isinstance(value, Instance) and value.items is None)):
            line = changed_at_import(self, name, container)
        else:
            line = rebound_at_import(self, name) if made_here else 0
        if line:
            raise Unknown(
                f"{name} is changed by module-level code, not evaluated", self.path, line
            )
        return value


class PerCapability(dict):  # type: ignore[type-arg]
    """The values of a name whose evaluation read the device capability, by capability."""


def cached(store: dict[str, Value], name: str, interp: Interpreter) -> Value:
    """The value remembered for ``name`` (for the question's capability), or MISSING."""
    value = store.get(name, MISSING)
    if interp.fact_masks:  # the machine facts computing it read
        interp.capability_read |= interp.fact_masks.get((id(store), name), 0)
    if isinstance(value, PerCapability):
        interp.read_gpu()
        return value.get(interp.capability, MISSING)
    return value


def remember(
    store: dict[str, Value],
    name: str,
    interp: Interpreter,
    compute: Value | Callable[[], Value],
) -> Value:
    """``compute()`` remembered as ``name``: per capability if computing it read the
    capability (a module or class value of one GPU is not the value of another)."""
    if not callable(compute):
        value, read = compute, 0
    else:
        saved = interp.capability_read
        interp.capability_read = 0
        try:
            value = compute()
        finally:
            read = interp.capability_read
            interp.capability_read = saved | read
    if isinstance(value, list | dict | set | tuple | Instance):
        interp.share(value)  # a later change of it changes what answers read
    per = store.get(name)
    if read & ~CAPABILITY:
        interp.fact_masks[id(store), name] = read & ~CAPABILITY
    if read & CAPABILITY or isinstance(per, PerCapability):
        if not isinstance(per, PerCapability):
            per = store[name] = PerCapability()
        per[interp.capability] = value
    else:
        store[name] = value
    return value


def forget(store: dict[str, Value], name: str, interp: Interpreter) -> None:
    per = store.get(name)
    if isinstance(per, PerCapability):
        per.pop(interp.capability, None)
    else:
        store.pop(name, None)


def _line(node: ast.AST) -> int:
    return line_of(node)


@dataclass(eq=False)
class Frame(Scope):
    """Locals of one call, closing over the scope the function was defined in."""

    module: ModuleScope
    parent: Scope | None
    locals: dict[str, Value] = field(default_factory=dict)
    #: the function running (for ``super()``) and its first argument
    func: PyFunction | None = None
    first: Value = None
    #: names looked up in this frame, in first-read order (a dict used as an ordered
    #: set), when the call memo keys on them or the priority paths branch on them
    reads: dict[str, None] | None = None
    #: a comprehension's own scope (a ``:=`` in it binds in the enclosing one)
    comprehension: bool = False
    #: names the function declared ``global``: assigning one rebinds the module's
    global_names: frozenset[str] = frozenset()
    #: the function's own locals (bindings.function_locals): one not bound yet is
    #: read before assignment (Python raises), not looked up outside
    bound: frozenset[str] = frozenset()

    def lookup(self, name: str, interp: Interpreter, node: ast.AST) -> Value:
        scope: Scope | None = self
        while isinstance(scope, Frame):
            if name in scope.locals:
                if scope.reads is not None:
                    scope.reads[name] = None
                value = scope.locals[name]
                if value is DELETED:
                    raise Raised("UnboundLocalError", f"local variable {name!r} was deleted")
                if type(value) is SkippedBinding:
                    raise value.unknown
                return value
            if name in scope.bound:
                raise Unknown(f"{name} is read before it is bound", self.module.path, _line(node))
            scope = scope.parent
        if isinstance(scope, ClassBodyScope):
            scope = scope.parent  # methods do not see their class body's names
        return (scope or self.module).lookup(name, interp, node)


@dataclass(eq=False)
class ClassBodyScope(Scope):
    """Names while a class body's own statements are evaluated."""

    module: ModuleScope
    parent: Scope
    owner: PyClass

    def lookup(self, name: str, interp: Interpreter, node: ast.AST) -> Value:
        own = interp.class_own_attr(self.owner, name)
        if own is not _MISSING:
            return own
        return self.parent.lookup(name, interp, node)


_MISSING = object()
MISSING = _MISSING
#: a local a ``del`` statement unbound (reading it raises, as Python's does)
DELETED = object()


class SkippedBinding:
    """A local whose assignment was a check skipped as not evaluated
    (``checks.run_checks``): reading it is unknown for that check's own reason,
    so a check that only uses its value adds no second, misleading reason."""

    __slots__ = ("unknown",)

    def __init__(self, unknown: Unknown) -> None:
        self.unknown = unknown
