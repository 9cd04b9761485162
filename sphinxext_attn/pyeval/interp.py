"""A small, safe evaluator of the Python that backend classes are written in.

It walks ASTs of the tree (never ``exec``, ``eval``, ``compile`` or ``import``)
and answers a call such as ``FlashAttentionBackend.supports_head_size(256)``
with a value, :class:`Raised` when the code raises, or :class:`Unknown` (the
reason and the file:line) for anything outside the subset or the budget.
Statements: assignments, ``if``, ``for`` over known finite values,
``return``, ``try``/``except``, ``raise``, ``assert``, nested ``def`` and
``class``. Expressions: literals, names, attributes along the MRO,
arithmetic, comparisons, boolean logic, ``in``, calls, comprehensions,
f-strings, ``super()``. ``while`` loops, ``global`` and the like are unknown.
Expressions are evaluated here; statements in :mod:`.statements`, calls in
:mod:`.calls`, attributes and objects in :mod:`.objects`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from sphinxext_attn.pyeval import (
    calls,
    comprehensions,
    dunders,
    formatting,
    loading,
    members,
    objects,
    ops,
    plain,
    statements,
)
from sphinxext_attn.pyeval.bindings import Binding
from sphinxext_attn.pyeval.callmemo import CallMemo, Signatures
from sphinxext_attn.pyeval.fields import Fields, record_fields
from sphinxext_attn.pyeval.instances import instantiate
from sphinxext_attn.pyeval.members import class_mro
from sphinxext_attn.pyeval.question import QuestionMixin
from sphinxext_attn.pyeval.scope import ClassBodyScope, ModuleScope, Scope
from sphinxext_attn.pyeval.stmtmemo import StatementMemo
from sphinxext_attn.pyeval.values import (
    Budget,
    EnumMember,
    PyClass,
    PyFunction,
    Unknown,
    Value,
    line_of,
)
from sphinxext_attn.pyeval.world import World
from sphinxext_attn.source.tree import SourceTree

__all__ = ["Interpreter", "class_mro"]


class Interpreter(QuestionMixin):
    """Evaluates code of one tree; modules are parsed once and names evaluated lazily.
    What the code reaches outside the tree is its :class:`World`'s to answer (plain
    Python when none is given).

    Its parts are modules of functions that take the interpreter first (statements,
    calls, objects, members, ...); the class binds the ones its callers use as its
    methods below, so ``interp.call(...)`` is ``calls.call(interp, ...)`` at the cost
    of a method call. The state they share is the interpreter's (set up here)."""

    capability_read: int  # (the question's: see QuestionMixin)

    # -- the parts' functions, as methods ---------------------------------------
    # modules of the tree and what their statements bind (:mod:`.loading`)
    module = loading.module
    first_defined = loading.first_defined
    import_value = loading.import_value
    module_attr = loading.module_attr
    builtin = loading.builtin
    bind_statement = loading.bind_statement
    import_binding = loading.import_binding
    # statements: running function bodies (:mod:`.statements`)
    run_body = statements.run_body
    run_lenient = statements.run_lenient
    exec_block = statements.exec_block
    exec_stmt = statements.exec_stmt
    assign = statements.assign
    # calls and instances (:mod:`.calls`, :mod:`.instances`, :mod:`.fields`)
    call = calls.call
    invoke = calls.invoke
    run_function = calls.run_function
    defaults_now = calls.defaults_now
    bind_args = calls.bind_args
    builtins_value = calls.builtins_value
    primitive_method = calls.primitive_method
    instantiate = instantiate
    dataclass_fields = record_fields
    # values: attributes, protocols, comparisons, iteration (:mod:`.objects`)
    getattr = objects.get_attr
    setattr = objects.set_attr
    set_item = objects.set_item
    object_truth = dunders.object_truth
    enum_text = dunders.enum_text
    compare = dunders.compare
    subscript = objects.subscript
    iterate = objects.iterate
    make_set = objects.make_set
    hashable = objects.hashable
    # classes: members along the MRO, and what module and class values share (:mod:`.members`)
    class_attr = members.class_attr
    class_own_attr = members.class_own_attr
    defines = members.defines
    is_enum = members.is_enum
    is_namedtuple = members.is_namedtuple
    share = members.share
    mutated = members.mutated
    rebind_global = members.rebind_global
    # expression handlers of other parts (see ``_exprs``)
    _call = calls.call_node
    _namedexpr = comprehensions.namedexpr
    _comprehension = comprehensions.comprehension

    def __init__(self, tree: SourceTree, world: World | None = None) -> None:
        self.tree = tree
        self.world = world if world is not None else World()
        # the state of questions (declared and documented in QuestionMixin)
        self.modules = {}
        #: modules of the tree that cannot be read or parsed: why (asked again, the same)
        self.module_failures: dict[str, Unknown] = {}
        self.budget = Budget()
        self.capability = None
        self.capability_read = 0
        self.facts = []
        self._fact_bits = {}
        #: facts behind remembered module and class values, by (id(store), name)
        self.fact_masks: dict[tuple[int, str], int] = {}
        self._class_index: dict[int, dict[str, list[Binding]]] = {}
        #: writes of class attributes so far (part of every statement memo key), and of
        #: the lists, dicts, sets and instances module or class values hold
        self.class_writes = 0
        #: ids of the containers and instances module and class values hold (alive as
        #: long as the evaluator: its caches keep them)
        self.shared_ids: set[int] | None = None
        #: the fields of the named tuples and dataclasses met (:func:`.fields.record_fields`)
        self.record_fields_found: dict[PyClass, Fields | None] = {}
        #: their defaults, evaluated once per class as CPython does (:mod:`.instances`)
        self.record_defaults: dict[PyClass, dict[str, Value]] = {}
        #: functions whose top-level checks are evaluated one by one (see run_lenient)
        self.lenient_functions: frozenset[str] = frozenset()
        self.skipped_checks: list[Unknown] = []
        self.returns = None
        #: when a dict: every tree function called (by id of its node), for the capabilities
        #: the code tells apart (runtime/capability_points.py)
        self.called: dict[int, PyFunction] | None = None
        #: sees every call of a function of the tree instead of it (the caller runs
        #: it with ``invoke(..., watched=False)``): how a question learns which call
        #: its loop made without patching the instance
        self.call_watcher: (
            Callable[[PyFunction, list[Value], dict[str, Value], ast.AST], Value] | None
        ) = None
        self.signatures: Signatures = {}
        self.statement_memo, self.call_memo = StatementMemo(), CallMemo(self.signatures)
        # (each handler takes its own node class: nothing narrower fits them all)
        self._exprs: dict[type[ast.AST], Callable[[Any, Scope], Value]] = {
            ast.Constant: self._constant,
            ast.Name: self._name,
            ast.Attribute: self._attribute,
            ast.BoolOp: self._boolop,
            ast.UnaryOp: self._unaryop,
            ast.BinOp: self._binop,
            ast.Compare: self._compare,
            ast.IfExp: self._ifexp,
            ast.Call: self._call,
            ast.Tuple: self._tuple,
            ast.List: self._list,
            ast.Set: self._set,
            ast.Dict: self._dict,
            ast.Subscript: self._subscript,
            ast.JoinedStr: self._joinedstr,
            ast.FormattedValue: self._formatted,
            ast.NamedExpr: self._namedexpr,
            ast.Lambda: self._lambda,
            ast.ListComp: self._comprehension,
            ast.SetComp: self._comprehension,
            ast.GeneratorExp: self._comprehension,
            ast.DictComp: self._comprehension,
            ast.Slice: self._slice,
        }

    # -- modules ---------------------------------------------------------------

    # -- expressions -----------------------------------------------------------
    def eval(self, node: ast.expr, scope: Scope) -> Value:
        budget = self.budget  # the step, as Budget.tick charges it (inline: the hottest call)
        budget.steps -= 1
        if budget.steps < 0:
            budget.fail(node, scope.module.path)
        handler = self._exprs.get(type(node))
        if handler is None:
            raise Unknown(
                f"{type(node).__name__} expression not evaluated", scope.module.path, node.lineno
            )
        return handler(node, scope)

    def where(self, node: ast.AST, scope: Scope) -> tuple[str, int]:
        return scope.module.path, line_of(node)

    def truth(self, value: Value, node: ast.AST, path: str) -> bool:
        if isinstance(value, int | float | str | bytes | list | tuple | dict | set | frozenset):
            return bool(value)
        if value is None:
            return False
        if isinstance(value, PyClass | PyFunction | ModuleScope):
            return True
        return self.object_truth(value, node, path)

    def _constant(self, node: ast.Constant, scope: Scope) -> Value:
        if isinstance(node.value, bytes | complex) or node.value is Ellipsis:
            raise Unknown("constant not evaluated", *self.where(node, scope))
        return node.value

    def _name(self, node: ast.Name, scope: Scope) -> Value:
        return scope.lookup(node.id, self, node)

    def _attribute(self, node: ast.Attribute, scope: Scope) -> Value:
        return self.getattr(self.eval(node.value, scope), node.attr, node, scope.module.path)

    def _boolop(self, node: ast.BoolOp, scope: Scope) -> Value:
        value: Value = None
        for operand in node.values:
            value = self.eval(operand, scope)
            truth = self.truth(value, operand, scope.module.path)
            if isinstance(node.op, ast.And) and not truth:
                return value
            if isinstance(node.op, ast.Or) and truth:
                return value
        return value

    def _unaryop(self, node: ast.UnaryOp, scope: Scope) -> Value:
        value = self.eval(node.operand, scope)
        if isinstance(node.op, ast.Not):
            return not self.truth(value, node.operand, scope.module.path)
        return ops.unary(node.op, value, self.where(node, scope))

    def _binop(self, node: ast.BinOp, scope: Scope) -> Value:
        left = self.eval(node.left, scope)
        right = self.eval(node.right, scope)
        return ops.binop(node.op, left, right, self.where(node, scope), self.budget)

    def _compare(self, node: ast.Compare, scope: Scope) -> Value:
        left = self.eval(node.left, scope)
        result: Value = True
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = self.eval(comparator, scope)
            result = self.compare(op, left, right, node, scope.module.path)
            if not self.truth(result, node, scope.module.path):
                return result  # as ``and`` does: the first false answer, else the last
            left = right
        return result

    def _ifexp(self, node: ast.IfExp, scope: Scope) -> Value:
        test = self.truth(self.eval(node.test, scope), node.test, scope.module.path)
        return self.eval(node.body if test else node.orelse, scope)

    def _elements(self, elts: list[ast.expr], scope: Scope) -> list[Value]:
        out: list[Value] = []
        for elt in elts:
            if isinstance(elt, ast.Starred):
                out.extend(self.iterate(self.eval(elt.value, scope), elt, scope.module.path))
            else:
                out.append(self.eval(elt, scope))
        return ops.check_size(out, self.where(elts[0], scope) if elts else ("", 0))

    def _tuple(self, node: ast.Tuple, scope: Scope) -> Value:
        return tuple(self._elements(node.elts, scope))

    def _list(self, node: ast.List, scope: Scope) -> Value:
        return self._elements(node.elts, scope)

    def _set(self, node: ast.Set, scope: Scope) -> Value:
        return self.make_set(self._elements(node.elts, scope), node, scope.module.path)

    def _dict(self, node: ast.Dict, scope: Scope) -> Value:
        out: dict[Value, Value] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                merged = self.eval(value, scope)
                if not isinstance(merged, dict):
                    raise Unknown("** of a non-dict", *self.where(node, scope))
                out.update(merged)
            else:
                key_value = self.hashable(self.eval(key, scope), key, scope.module.path)
                out[key_value] = self.eval(value, scope)
        return out

    def _slice(self, node: ast.Slice, scope: Scope) -> Value:
        parts = [
            None if p is None else plain.plain_value(self.eval(p, scope))  # IntEnum: its int
            for p in (node.lower, node.upper, node.step)
        ]
        return slice(*parts)

    def _subscript(self, node: ast.Subscript, scope: Scope) -> Value:
        value = self.eval(node.value, scope)
        index = self.eval(node.slice, scope)
        return self.subscript(value, index, node, scope.module.path)

    def _joinedstr(self, node: ast.JoinedStr, scope: Scope) -> Value:
        out = "".join(str(self.eval(v, scope)) for v in node.values)
        return ops.paid(out, self.budget, self.where(node, scope))

    def _formatted(self, node: ast.FormattedValue, scope: Scope) -> Value:
        value = self.eval(node.value, scope)
        spec = self.eval(node.format_spec, scope) if node.format_spec is not None else ""
        if isinstance(value, EnumMember):
            text = self.enum_text(value, node.conversion, spec, node, scope.module.path)
            return ops.paid(text, self.budget, self.where(node, scope))
        where = self.where(node, scope)
        return formatting.format_value(value, node.conversion, spec, self.budget, where)

    def _lambda(self, node: ast.Lambda, scope: Scope) -> Value:
        return self.defaults_now(PyFunction("<lambda>", node, scope.module, scope))

    def make_function(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope, owner: PyClass | None
    ) -> Value:
        func = PyFunction(node.name, node, scope.module, scope, owner=owner)
        if isinstance(node, ast.AsyncFunctionDef):
            func.kind = "opaque"
        for decorator in node.decorator_list:
            func.kind = self.world.decorate(self, func, decorator, scope)
        return self.defaults_now(func)

    def make_class(self, node: ast.ClassDef, scope: Scope) -> PyClass:
        return PyClass(node.name, node, scope.module, scope)

    def class_body_scope(self, cls: PyClass) -> ClassBodyScope:
        return ClassBodyScope(cls.module, cls.scope, cls)
