"""Modules of the tree as the evaluator loads them: parsed once (or read piece by
piece), and what their imports and module-level statements bind."""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterable
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval.scope import MISSING, ModuleScope, Scope
from sphinxext_attn.pyeval.values import NODE, External, Unbound, Unknown, Value, line_of
from sphinxext_attn.source.classes import absolute_module

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter


def first_defined(interp: Interpreter, modules: Iterable[str], name: str) -> Value:
    """``name`` from the first of ``modules`` (dotted) that defines it; None when
    none does (a helper that moved between releases is looked for in each home)."""
    for dotted in modules:
        module = interp.module(dotted)
        if module is not None and module.has(name):
            return module.lookup(name, interp, NODE)
    return None


def module(interp: Interpreter, dotted: str) -> ModuleScope | None:
    """A module of the tree by dotted name, parsed once; None when not in the tree."""
    if dotted in interp.modules:
        failed = interp.module_failures.get(dotted)
        if failed is not None:  # unknown each time it is asked, not only the first
            raise copy.copy(failed)
        return interp.modules[dotted]
    interp.modules[dotted] = None
    path = interp.tree.module_file(dotted)
    if path is None:
        return None
    try:
        # a file the page reader already parsed whole is not parsed again piece by piece
        whole = interp.tree.parsed(path)
        chunks = None if whole is not None else interp.tree.chunks(path)
        if whole is None and chunks is None:
            raise Unknown(f"module {dotted} cannot be read", path)
        tree = interp.tree
        scope = ModuleScope(
            dotted, path, chunks, lambda: tree.parse(path), indexes=tree.indexes, log=tree.read_log
        )
    except Unknown as exc:
        interp.module_failures[dotted] = copy.copy(exc)
        raise
    interp.modules[dotted] = scope
    return scope


def import_value(interp: Interpreter, dotted: str) -> Value:
    scope = interp.module(dotted)
    return scope if scope is not None else External(dotted)


def module_attr(interp: Interpreter, mod: ModuleScope, name: str, node: ast.AST) -> Value:
    hooked = interp.world.module_attr(interp, mod.dotted, name)
    if hooked is not MISSING:
        return hooked
    if mod.has(name):
        try:
            return mod.lookup(name, interp, node)
        except Unbound:
            if not mod.has("__getattr__"):
                raise
    sub = interp.module(f"{mod.dotted}.{name}")
    if sub is not None:
        return sub
    if mod.has("__getattr__"):
        return interp.call(mod.lookup("__getattr__", interp, node), [name], {}, node, mod.path)
    return interp.world.absent_module_attr(interp, mod, name, node)


def builtin(interp: Interpreter, name: str, scope: ModuleScope, node: ast.AST) -> Value:
    if name == "__name__":
        return scope.dotted
    value = interp.builtins_value(name)
    if value is MISSING:
        raise Unknown(f"name {name} is not defined", scope.path, line_of(node))
    return value


def bind_statement(interp: Interpreter, stmt: ast.stmt, name: str, scope: Scope) -> Value:
    """The value ``stmt`` gives ``name`` (a module- or class-level binding)."""
    path = scope.module.path
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and (
        stmt.name != name
    ):  # a ``:=`` in its decorators, bases or defaults
        raise Unknown(f"binding of {name} not evaluated", path, stmt.lineno)
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
        return interp.make_function(stmt, scope, owner=None)
    if isinstance(stmt, ast.ClassDef):
        return interp.make_class(stmt, scope)
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        return interp.import_binding(stmt, name, scope.module)
    if isinstance(stmt, ast.Assign | ast.AnnAssign):
        value = interp.eval(stmt.value, scope) if stmt.value is not None else None
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            found = _pick_target(target, name, value)
            if found is not _NOT_HERE:
                return found
    raise Unknown(f"binding of {name} not evaluated", path, stmt.lineno)


def import_binding(
    interp: Interpreter, stmt: ast.Import | ast.ImportFrom, name: str, mod: ModuleScope
) -> Value:
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            if alias.asname == name:
                return interp.import_value(alias.name)
            if alias.asname is None and alias.name.split(".")[0] == name:
                return interp.import_value(name)
        raise Unknown(f"import of {name} not understood", mod.path, stmt.lineno)
    base = absolute_module(mod.path, stmt.module, stmt.level)
    if base is None:
        raise Unknown("relative import leaves the tree", mod.path, stmt.lineno)
    for alias in stmt.names:
        if (alias.asname or alias.name) != name:
            continue
        source = interp.module(base)
        if source is None:
            sub = interp.module(f"{base}.{alias.name}")
            if sub is not None:
                return sub
            if base.split(".")[0] == mod.dotted.split(".")[0]:  # the package's own
                interp.world.check_built_module(interp, base)
            return interp.world.external_attr(interp, External(base), alias.name)
        return interp.module_attr(source, alias.name, stmt)
    raise Unknown(f"import of {name} not understood", mod.path, stmt.lineno)


_NOT_HERE = object()


def _pick_target(target: ast.expr, name: str, value: Value) -> Value:
    if isinstance(target, ast.Name):
        return value if target.id == name else _NOT_HERE
    if (
        isinstance(target, ast.Tuple | ast.List)
        and isinstance(value, tuple | list)
        and len(value) == len(target.elts)
    ):
        for elt, item in zip(target.elts, value, strict=True):
            found = _pick_target(elt, name, item)
            if found is not _NOT_HERE:
                return found
    return _NOT_HERE
