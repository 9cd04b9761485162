"""Small AST predicates shared by the rules that read vLLM's selection code."""

from __future__ import annotations

import ast
from collections import deque


def calls(node: ast.AST, name: str) -> bool:
    """``name(...)`` or ``x.name(...)``."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == name) or (
        isinstance(func, ast.Attribute) and func.attr == name
    )


def capability_family(node: ast.AST) -> int | None:
    """``is_device_capability_family(100)`` -> 100."""
    if (
        isinstance(node, ast.Call)
        and calls(node, "is_device_capability_family")
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, int)
    ):
        return node.args[0].value
    return None


def family_text(family: int) -> str:
    """100 -> ``10.x`` (vLLM writes families as major*10)."""
    return f"{family // 10}.x"


def functions(module: ast.Module) -> dict[str, ast.FunctionDef]:
    """Every function of a module by name, the first in walk order winning: one walk
    answers all the lookups a rule makes in that module."""
    found: dict[str, ast.FunctionDef] = {}
    # ast.walk's breadth-first order, over statements only: a def is never inside
    # an expression, so skipping expressions keeps the order among defs
    queue: deque[ast.AST] = deque([module])
    while queue:
        node = queue.popleft()
        if isinstance(node, ast.FunctionDef):
            found.setdefault(node.name, node)
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                queue.extend(v for v in value if isinstance(v, _BLOCK_NODES))
            elif isinstance(value, _BLOCK_NODES):
                queue.append(value)
    return found


#: Nodes that hold statements (a def can only be under these).
_BLOCK_NODES = (ast.stmt, ast.excepthandler, ast.match_case)


def first_family_in(func: ast.AST | None) -> int | None:
    """The first capability family a function checks (breadth-first)."""
    if func is None:
        return None
    for n in ast.walk(func):
        fam = capability_family(n)
        if fam is not None:
            return fam
    return None
