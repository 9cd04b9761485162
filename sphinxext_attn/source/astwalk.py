"""``ast.walk`` as one list, built by one loop and kept on the node walked.

``ast.walk`` runs two Python generators per node, and the ``vllm-page`` readers
walk the release's own generator module (66 kB on 0.33) six times over (its
columns, layout, notes, annotations, markers): one list serves them all. It is
kept on the walked node itself, so it lives as long as the parse that owns the
node (the tree's), and no module holds it.
"""

from __future__ import annotations

import ast

#: the attribute of a walked node holding its nodes (see :func:`walk_kept`)
KEPT = "_sphinxext_attn_nodes"


def children(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))``, without its generator."""
    out: list[ast.AST] = []
    for name in node._fields:
        child = getattr(node, name, None)
        if isinstance(child, ast.AST):
            out.append(child)
        elif isinstance(child, list):
            out += [c for c in child if isinstance(c, ast.AST)]
    return out


def walk(node: ast.AST) -> list[ast.AST]:
    """``list(ast.walk(node))``: the same nodes, in the same breadth-first order."""
    out = [node]
    for parent in out:  # a list iterator also visits the items appended meanwhile
        out += children(parent)
    return out


def walk_kept(node: ast.AST) -> list[ast.AST]:
    """:func:`walk`, kept on ``node`` (callers must not change the list, nor the
    tree below ``node`` once walked)."""
    found: list[ast.AST] | None = getattr(node, KEPT, None)
    if found is None:
        found = walk(node)
        setattr(node, KEPT, found)
    return found
