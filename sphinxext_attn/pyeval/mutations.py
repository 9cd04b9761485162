"""Module-level values that import-time code changes after binding them.

``_REGISTRY = {}`` followed by ``_REGISTRY["a"] = f``, ``_SIZES.append(8)``,
``register(_SIZES)`` or a ``@register("a")`` decorator whose function adds to
``_REGISTRY``: the value a question reads is not the literal. The evaluator
does not replay such code; a mutable value (list, dict, set, instance) that
module-level code of its module may change is unknown instead, with the line.
A module-level value of any kind rebound by a function of the module run at
import (``global``) is unknown too. Changes from other modules are not seen.
Only statements whose text holds the name are parsed.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval.bindings import NESTED_SCOPES
from sphinxext_attn.pyeval.values import line_of
from sphinxext_attn.source.chunks import ChunkError

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.scope import ModuleScope

#: Methods that read a value without changing it (a call of another may change it).
READING_METHODS = frozenset(
    {
        "get", "copy", "keys", "values", "items", "index", "count", "format", "lower",
        "upper", "strip", "split", "startswith", "endswith", "join", "replace",
        "encode", "decode", "issubset", "issuperset", "union", "intersection",
        "difference",
    }
)  # fmt: skip
#: Methods of lists, dicts and sets that change them.
CHANGING_METHODS = frozenset(
    {
        "append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse",
        "update", "setdefault", "popitem", "add", "discard", "difference_update",
        "intersection_update", "symmetric_difference_update", "__setitem__",
        "__delitem__", "__iadd__", "__ior__",
    }
)  # fmt: skip
#: Builtins that take a value without changing it.
READING_CALLS = frozenset(
    {
        "len", "sorted", "list", "tuple", "set", "frozenset", "dict", "isinstance",
        "str", "repr", "any", "all", "sum", "min", "max", "enumerate", "zip", "iter",
        "bool", "id", "hash", "print", "type", "reversed",
    }
)  # fmt: skip


def changed_at_import(module: ModuleScope, name: str, container: bool) -> int:
    """The line of module-level code that may change the value bound to ``name``
    (0: none found). ``container``: a list, dict or set, whose changing methods
    are known; any other method of an instance may change it."""
    key = f"{name}:{container}"
    found = module.changes.get(key)
    if found is None:
        methods = CHANGING_METHODS if container else None
        found = module.changes[key] = _find(module, name, methods)
    return found


def changed_in_class_body(statements: list[ast.stmt], name: str, container: bool) -> int:
    """The line of a class body statement that may change the value bound to
    ``name`` in that body (``items = []`` then ``items.append(1)``); 0: none."""
    methods = CHANGING_METHODS if container else None
    for stmt in statements:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            continue  # a method runs when called, not while the class is made
        line = _import_time_change(stmt, {name}, {}, methods)
        if line:
            return line
    return 0


def top_level_statements(
    module: ModuleScope, names: set[str], also: str = "", skip_definitions: bool = False
) -> list[ast.stmt]:
    """The top-level statements whose text holds one of ``names`` (and ``also``):
    a substring test, so only those pieces are parsed. ``skip_definitions``:
    not ``def``/``class`` statements (their bodies are not module-level code)."""
    definitions = ("def ", "async def ", "class ", "@") if skip_definitions else ()
    out: list[ast.stmt] = []
    try:
        if module.chunks is None:
            raise ChunkError(module.path)
        for name in names:  # only the pieces holding a name count (source/views.py)
            module.log.note(module.path, ("mention", name))
        for chunk in module.chunks:
            text = chunk.unnoted()
            if definitions and text.startswith(definitions):
                continue
            if (not also or also in text) and any(name in text for name in names):
                out += chunk.nodes()
    except ChunkError:
        parsed = module.reparse()
        for stmt in parsed.body if parsed is not None else []:
            if skip_definitions and isinstance(stmt, NESTED_SCOPES):
                continue
            found = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
            if names & found:
                out.append(stmt)
    return out


def rebound_at_import(module: ModuleScope, name: str) -> int:
    """The line of module-level code that calls a function of the module that
    rebinds ``name`` (``global name``), so its value is not the literal; 0: none."""
    if module.has_global is None:  # most modules have no ``global`` at all
        pieces = module.chunks or []
        if module.chunks is not None:
            module.log.note(module.path, ("mention", "global"))
        module.has_global = module.chunks is None or any("global" in c.unnoted() for c in pieces)
    if not module.has_global:
        return 0
    key = f"{name}:global"
    found = module.changes.get(key)
    if found is None:
        mutators = {
            stmt.name
            for stmt in top_level_statements(module, {name}, also="global")
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and _rebinds(stmt, name)
        }
        found = module.changes[key] = _called_at_import(module, mutators)
    return found


def _rebinds(func: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Global) and name in n.names for n in ast.walk(func))


def _find(module: ModuleScope, name: str, methods: frozenset[str] | None) -> int:
    mutators: dict[str, int] = {}
    for stmt in top_level_statements(module, {name}):
        line = _import_time_change(stmt, {name}, mutators, methods)
        if line:
            return line
    return _called_at_import(module, set(mutators))  # a function that changes it


def _called_at_import(module: ModuleScope, mutators: set[str]) -> int:
    """The line of module-level code that calls one of ``mutators`` (0: none)."""
    for stmt in top_level_statements(module, mutators) if mutators else []:
        line = _import_time_call(stmt, mutators)
        if line:
            return line
    return 0


def _import_time_change(
    stmt: ast.stmt,
    names: set[str],
    mutators: dict[str, int],
    methods: frozenset[str] | None,
) -> int:
    """A line of ``stmt`` that changes one of ``names`` when the module runs; the
    functions it defines that change them go to ``mutators``."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
        if _changes(stmt, names, methods, inside=True):
            mutators[stmt.name] = stmt.lineno
        lines = (_changes(d, names, methods) for d in stmt.decorator_list)
        return next((line for line in lines if line), 0)
    if isinstance(stmt, ast.ClassDef):  # its body runs at import; its methods do not
        for sub in [*stmt.decorator_list, *stmt.bases]:
            if _changes(sub, names, methods):
                return sub.lineno
        for member in stmt.body:
            line = _import_time_change(member, names, {}, methods)
            if line:
                return line
        return 0
    return _changes(stmt, names, methods)


def _changes(
    node: ast.AST, names: set[str], methods: frozenset[str] | None, inside: bool = False
) -> int:
    """The line where ``node`` may change a value named in ``names``: a method call
    on it, an item or attribute set or delete, passing it to a call, binding a
    second name to it (or to a part of it), or (inside a function) rebinding it
    as a global. Nested functions and lambdas run later,
    unless ``inside`` (the whole function is looked at)."""
    todo = [node]
    while todo:
        sub = todo.pop()
        if sub is not node and isinstance(sub, NESTED_SCOPES) and not inside:
            continue
        if isinstance(sub, ast.Global) and names & set(sub.names):
            return sub.lineno
        if isinstance(sub, ast.Call):
            func = sub.func
            if isinstance(func, ast.Attribute) and _root(func.value) in names:
                changing = (
                    func.attr in methods
                    if methods is not None
                    else func.attr not in READING_METHODS
                )
                if changing:
                    return sub.lineno
            passed = [*sub.args, *(k.value for k in sub.keywords)]
            callee = func.id if isinstance(func, ast.Name) else ""
            if callee not in READING_CALLS and any(_root(a) in names for a in passed):
                return sub.lineno
        targets: list[ast.expr] = []
        if isinstance(sub, ast.Assign):
            targets = sub.targets
        elif isinstance(sub, ast.AugAssign | ast.AnnAssign | ast.Delete):
            targets = sub.targets if isinstance(sub, ast.Delete) else [sub.target]
        for target in targets:
            if isinstance(target, ast.Subscript | ast.Attribute) and _root(target) in names:
                return _line(sub)
        value = getattr(sub, "value", None)
        if targets and isinstance(value, ast.expr) and _root(value) in names:
            return _line(sub)  # ``Y = X``: a second name for it, which may change it
        todo.extend(ast.iter_child_nodes(sub))
    return 0


def _import_time_call(stmt: ast.stmt, mutators: set[str]) -> int:
    """A line of module-level code in ``stmt`` that calls one of ``mutators``
    (decorators included: ``@register("a")`` runs ``register`` at import)."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
        nodes: list[ast.AST] = list(stmt.decorator_list)
    elif isinstance(stmt, ast.ClassDef):
        nodes = [*stmt.decorator_list, *stmt.bases]
        for member in stmt.body:
            line = _import_time_call(member, mutators)
            if line:
                return line
    else:
        nodes = [stmt]
    for node in nodes:
        todo = [node]
        while todo:
            sub = todo.pop()
            if sub is not node and isinstance(sub, NESTED_SCOPES):
                continue
            if isinstance(sub, ast.Name) and sub.id in mutators:
                return line_of(sub) or 1
            todo.extend(ast.iter_child_nodes(sub))
    return 0


def _line(node: ast.AST) -> int:
    return node.lineno if isinstance(node, ast.stmt | ast.expr) else 0


def _root(expr: ast.expr) -> str:
    """``X`` of ``X``, ``X.a.b``, ``X[k]``, ``X.a[k].b``; "" otherwise."""
    while isinstance(expr, ast.Attribute | ast.Subscript | ast.Starred):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else ""
