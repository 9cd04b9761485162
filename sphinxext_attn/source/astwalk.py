"""``ast.walk`` as one list, built by one loop and kept for the module walked last.

``ast.walk`` runs two Python generators per node, and the ``vllm-page`` readers
walk the release's own generator module (66 kB on 0.33) six times over (its
columns, layout, notes, annotations, markers): one list serves them all.
"""

from __future__ import annotations

import ast

#: The module walked last and its nodes (the readers walk one module in turn).
_LAST: list[tuple[ast.AST, list[ast.AST]]] = []


def walk(node: ast.AST) -> list[ast.AST]:
    """``list(ast.walk(node))``: the same nodes, in the same breadth-first order."""
    out = [node]
    for parent in out:  # a list iterator also visits the items appended meanwhile
        for name in parent._fields:
            child = getattr(parent, name, None)
            if isinstance(child, ast.AST):
                out.append(child)
            elif isinstance(child, list):
                out += [c for c in child if isinstance(c, ast.AST)]
    return out


def walk_kept(node: ast.AST) -> list[ast.AST]:
    """:func:`walk`, kept for the last node asked (callers must not change the list)."""
    if _LAST and _LAST[0][0] is node:
        return _LAST[0][1]
    found = walk(node)
    _LAST[:] = [(node, found)]
    return found
