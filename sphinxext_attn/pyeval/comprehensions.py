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


class ComprehensionMixin:
    """Comprehensions, for :class:`Interpreter`."""

    def _namedexpr(self: Interpreter, node: ast.NamedExpr, scope: Scope) -> Value:
        value = self.eval(node.value, scope)
        target_scope: Scope | None = scope
        while isinstance(target_scope, Frame) and target_scope.comprehension:
            target_scope = target_scope.parent  # binds where the comprehension stands
        if not isinstance(target_scope, Frame):
            raise Unknown(":= outside a function not evaluated", *self.where(node, scope))
        target_scope.locals[node.target.id] = value
        return value

    def _comprehension(self: Interpreter, node: Comprehension, scope: Scope) -> Value:
        frame = Frame(scope.module, scope, comprehension=True)
        # the first iterable is evaluated where the comprehension stands (in a class
        # body, the only part that sees the class's names)
        first = self.eval(node.generators[0].iter, scope)
        items = self._items(node, node.generators, 0, frame, first)
        if isinstance(node, ast.GeneratorExp):
            return LazyGen(items)
        results: list[Value] = []
        where = self.where(node, frame)
        for item in items:
            results.append(item)
            ops.check_size(results, where)
        if isinstance(node, ast.SetComp):
            return self.make_set(results, node, scope.module.path)
        if isinstance(node, ast.DictComp):
            return {self.hashable(k, node, scope.module.path): v for k, v in results}
        return results

    def _items(
        self: Interpreter,
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
                yield (self.eval(node.key, frame), self.eval(node.value, frame))
            else:
                yield self.eval(node.elt, frame)
            return
        gen = gens[i]
        source = first if i == 0 else self.eval(gen.iter, frame)
        for item in self.iterate(source, gen.iter, frame.module.path):
            self.assign(gen.target, item, frame)
            if all(self.truth(self.eval(c, frame), c, frame.module.path) for c in gen.ifs):
                yield from self._items(node, gens, i + 1, frame, None)
