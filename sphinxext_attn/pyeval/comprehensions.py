"""Comprehensions and generator expressions, and what ``:=`` binds in them.

A comprehension runs in a scope of its own whose first iterable is evaluated
where it stands (in a class body, the only part that sees the class's names);
a ``:=`` in it binds in the enclosing function. A generator expression's items
are evaluated as they are taken (:class:`.values.LazyGen`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval import ops
from sphinxext_attn.pyeval.scope import Frame, Scope
from sphinxext_attn.pyeval.values import LazyGen, Unknown, Value

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter

#: the four comprehension expressions
Comprehension = ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp


def namedexpr(interp: Interpreter, node: ast.NamedExpr, scope: Scope) -> Value:
    value = interp.eval(node.value, scope)
    target_scope: Scope | None = scope
    while isinstance(target_scope, Frame) and target_scope.comprehension:
        target_scope = target_scope.parent  # binds where the comprehension stands
    if not isinstance(target_scope, Frame):
        raise Unknown(":= outside a function not evaluated", *interp.where(node, scope))
    target_scope.locals[node.target.id] = value
    return value


def comprehension(interp: Interpreter, node: Comprehension, scope: Scope) -> Value:
    frame = Frame(scope.module, scope, comprehension=True)
    # the first iterable is evaluated where the comprehension stands (in a class
    # body, the only part that sees the class's names)
    first = interp.eval(node.generators[0].iter, scope)
    items = _items(interp, node, node.generators, 0, frame, first)
    if isinstance(node, ast.GeneratorExp):
        return LazyGen(items)
    results: list[Value] = []
    where = interp.where(node, frame)
    for item in items:
        results.append(item)
        ops.check_size(results, where)
    if isinstance(node, ast.SetComp):
        return interp.make_set(results, node, scope.module.path)
    if isinstance(node, ast.DictComp):
        return {interp.hashable(k, node, scope.module.path): v for k, v in results}
    return results


def _items(
    interp: Interpreter,
    node: Comprehension,
    gens: list[ast.comprehension],
    i: int,
    frame: Frame,
    first: Value,
) -> Iterator[Value]:
    """A comprehension's items (``(key, value)`` for a dict), evaluated as they are
    taken: a generator expression hands them out one by one."""
    if i == len(gens):
        if isinstance(node, ast.DictComp):
            yield (interp.eval(node.key, frame), interp.eval(node.value, frame))
        else:
            yield interp.eval(node.elt, frame)
        return
    gen = gens[i]
    source = first if i == 0 else interp.eval(gen.iter, frame)
    for item in interp.iterate(source, gen.iter, frame.module.path):
        interp.assign(gen.target, item, frame)
        if all(interp.truth(interp.eval(c, frame), c, frame.module.path) for c in gen.ifs):
            yield from _items(interp, node, gens, i + 1, frame, None)
