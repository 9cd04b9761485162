"""What a module or class body binds, and which binding holds once it has run.

Bindings are read from the syntax: each statement that binds a name, with
the ``if``/``try`` blocks around it (its guards). Statements whose bindings are
not evaluated (loops, ``match``, ``del``, ``with ... as``, ``:=``) are indexed
too, so a name they may bind is unknown rather than stale.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sphinxext_attn.source.astwalk import children

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter
    from sphinxext_attn.pyeval.scope import Scope

#: A guard on a binding: the ``if`` (and which branch) or ``try`` part around it.
Guard = tuple[str, ast.AST, bool | str]


@dataclass
class Binding:
    stmt: ast.stmt
    guards: tuple[Guard, ...]


def bound_names(stmt: ast.stmt) -> list[str]:
    """Names a module- or class-level statement binds."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [stmt.name]
    if isinstance(stmt, ast.Assign):
        return [n for t in stmt.targets for n in _target_names(t)]
    if isinstance(stmt, ast.AnnAssign | ast.AugAssign):
        if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
            return []
        return _target_names(stmt.target)
    if isinstance(stmt, ast.Import):
        return [a.asname or a.name.split(".")[0] for a in stmt.names]
    if isinstance(stmt, ast.ImportFrom):
        return [a.asname or a.name for a in stmt.names if a.name != "*"]
    return []


def _target_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [n for e in target.elts for n in _target_names(e)]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return []


#: Statements whose bindings are not evaluated: a name they may bind is unknown
#: where they are its last binding (never the value an earlier binding gave).
_OPAQUE = (ast.For, ast.AsyncFor, ast.While, ast.Match, ast.Delete)
#: Nested scopes: names bound inside them are not this scope's.
NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
#: Comprehensions: their targets bind in a scope of their own (a ``:=`` binds outside).
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def opaque_names(node: ast.AST) -> list[str]:
    """Names ``node`` may bind or delete in the scope it runs in, ``:=`` included
    (definitions inside it count by name; their bodies are other scopes)."""
    found: list[str] = []
    todo = [node]
    while todo:
        sub = todo.pop()
        if sub is not node and isinstance(sub, NESTED_SCOPES):
            if not isinstance(sub, ast.Lambda):
                found.append(sub.name)
            continue
        if isinstance(sub, _COMPREHENSIONS):
            found += _walrus_names_in(sub)  # its targets are its own scope's
            continue
        if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Load):
            found.append(sub.id)
        elif isinstance(sub, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and sub.name:
            found.append(sub.name)
        elif isinstance(sub, ast.MatchMapping) and sub.rest:
            found.append(sub.rest)
        elif isinstance(sub, ast.Import | ast.ImportFrom) and sub is not node:
            found += [a.asname or a.name.split(".")[0] for a in sub.names if a.name != "*"]
        todo.extend(ast.iter_child_nodes(sub))
    return found


def function_locals(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> frozenset[str]:
    """The names a function's body binds in its own scope (its locals, Python decides
    from the syntax, but for those declared ``global`` or ``nonlocal``): read before
    a binding runs, such a name is unbound there, never the enclosing scope's."""
    found: set[str] = set()
    declared: set[str] = set()
    todo: list[ast.AST] = list(node.body) if isinstance(node.body, list) else [node.body]
    for sub in todo:  # (a list iterator also visits the items appended meanwhile)
        if isinstance(sub, ast.Name):
            if not isinstance(sub.ctx, ast.Load):
                found.add(sub.id)
            continue
        if isinstance(sub, NESTED_SCOPES):
            if isinstance(sub, ast.Lambda):
                todo += [*sub.args.defaults, *(d for d in sub.args.kw_defaults if d)]
            else:
                found.add(sub.name)
                todo += _header_expressions(sub)
            continue
        if isinstance(sub, _COMPREHENSIONS):
            found.update(_walrus_names_in(sub))
            continue
        if isinstance(sub, ast.Global | ast.Nonlocal):
            declared.update(sub.names)
        elif isinstance(sub, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and sub.name:
            found.add(sub.name)
        elif isinstance(sub, ast.MatchMapping) and sub.rest:
            found.add(sub.rest)
        elif isinstance(sub, ast.Import | ast.ImportFrom):
            found.update(a.asname or a.name.split(".")[0] for a in sub.names if a.name != "*")
        todo += children(sub)
    return frozenset(found - declared)


def _walrus_names_in(node: ast.AST) -> list[str]:
    """The targets of the ``:=`` in ``node`` (not in a lambda: that binds in its own)."""
    found = []
    todo = [node]
    while todo:
        sub = todo.pop()
        if isinstance(sub, ast.Lambda):
            continue
        if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name):
            found.append(sub.target.id)
        todo.extend(ast.iter_child_nodes(sub))
    return found


def _walrus_names(stmt: ast.stmt) -> list[str]:
    """Names ``:=`` binds in the expressions of ``stmt`` itself (not its blocks;
    of a ``def`` or ``class``: its decorators, bases and defaults, which run
    where it is defined). One inside a ``lambda`` binds in the lambda's own
    scope and is not looked for (one in a comprehension binds here, and is)."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        todo: list[ast.AST] = _header_expressions(stmt)
    elif isinstance(stmt, _NO_WALRUS):
        return []
    else:
        todo = []
        for field_name, value in ast.iter_fields(stmt):
            if field_name not in _BLOCK_FIELDS:
                children = value if isinstance(value, list) else [value]
                todo += [c for c in children if isinstance(c, ast.expr | ast.withitem)]
    return [name for sub in reversed(todo) for name in _walrus_names_in(sub)]


def _header_expressions(
    stmt: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
) -> list[ast.AST]:
    """What a ``def`` or ``class`` statement evaluates where it stands."""
    out: list[ast.AST] = list(stmt.decorator_list)
    if isinstance(stmt, ast.ClassDef):
        return [*out, *stmt.bases, *(k.value for k in stmt.keywords)]
    spec = stmt.args
    out += [*spec.defaults, *(d for d in spec.kw_defaults if d is not None)]
    params = [*spec.posonlyargs, *spec.args, *spec.kwonlyargs, spec.vararg, spec.kwarg]
    out += [p.annotation for p in params if p is not None and p.annotation is not None]
    return [*out, stmt.returns] if stmt.returns is not None else out


_NO_WALRUS = (*NESTED_SCOPES, ast.Import, ast.ImportFrom, ast.Pass, ast.Global, ast.Nonlocal)
_BLOCK_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})


def index_bindings(
    body: list[ast.stmt], nested: bool, walrus: bool = True
) -> dict[str, list[Binding]]:
    """Every binding of every name in ``body``, in source order; with ``nested``,
    also those inside ``if``, ``try`` and ``with`` blocks (with their guards).
    Loops, ``match``, ``del``, ``with ... as`` and ``:=`` are indexed as bindings
    the evaluator does not evaluate, so a name they may bind is unknown, not stale
    (``walrus`` False: the source has no ``:=``, skip looking for it)."""
    index: dict[str, list[Binding]] = {}

    def visit(stmts: list[ast.stmt], guards: tuple[Guard, ...]) -> None:
        for stmt in stmts:
            if isinstance(stmt, _OPAQUE):
                for name in dict.fromkeys(opaque_names(stmt)):
                    index.setdefault(name, []).append(Binding(stmt, guards))
                continue
            for name in bound_names(stmt) + (_walrus_names(stmt) if walrus else []):
                index.setdefault(name, []).append(Binding(stmt, guards))
            if isinstance(stmt, ast.With | ast.AsyncWith):
                for item in stmt.items:
                    if item.optional_vars is not None:
                        for name in opaque_names(item.optional_vars):
                            index.setdefault(name, []).append(Binding(stmt, guards))
            if not nested:
                continue
            if isinstance(stmt, ast.If):
                visit(stmt.body, (*guards, ("if", stmt, True)))
                visit(stmt.orelse, (*guards, ("if", stmt, False)))
            elif isinstance(stmt, ast.Try):
                visit(stmt.body, (*guards, ("try", stmt, "body")))
                for handler in stmt.handlers:
                    visit(handler.body, (*guards, ("try", stmt, "handler")))
                visit(stmt.orelse, (*guards, ("try", stmt, "body")))
                visit(stmt.finalbody, (*guards, ("try", stmt, "body")))
            elif isinstance(stmt, ast.With | ast.AsyncWith):
                visit(stmt.body, guards)

    visit(body, ())
    return index


def live_binding(
    bindings: list[Binding], interp: Interpreter, scope: Scope, path: str
) -> Binding | None:
    """The last binding whose enclosing blocks run (a module's or a class body's):
    the value the name has once the body has run; None when no block binds it."""
    for binding in reversed(bindings):
        if all(_guard_holds(g, interp, scope, path) for g in binding.guards):
            return binding
    return None


def _guard_holds(guard: Guard, interp: Interpreter, scope: Scope, path: str) -> bool:
    kind, stmt, branch = guard
    if kind == "if":
        assert isinstance(stmt, ast.If)
        return interp.truth(interp.eval(stmt.test, scope), stmt.test, path) is branch
    # A ``try`` body is taken to succeed (every kernel and optional dependency
    # is present: the machine model); its handlers do not run.
    return branch == "body"
