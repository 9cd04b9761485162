"""Methods of plain values (``str``, ``list``, ``dict`` ...) the evaluator runs.

Only the methods listed in :data:`SAFE_METHODS` run, on the real value, after
their arguments were weighed against the budget: a method that hashes or
compares its argument with every item, or builds a bigger value, cannot
allocate or loop without bound.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval import formatting, ops, plain
from sphinxext_attn.pyeval.abstract_str import (
    TESTED_BY,
    TESTS,
    AbstractStr,
    concretize,
    dict_get,
    is_abstract,
    test_method,
)
from sphinxext_attn.pyeval.scope import MISSING
from sphinxext_attn.pyeval.values import Builtin, Instance, LimitExceeded, Raised, Unknown, Value

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter

Args = list[Value]
Kw = dict[str, Value]


def _method(obj: Value, name: str) -> Builtin:
    """A bound method of a plain value, as a :class:`Builtin` (``name`` is one of
    :data:`SAFE_METHODS` for ``type(obj)``: every one is a method of that type)."""
    attr = getattr(obj, name)

    def run(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
        where = ops.node_where(node, path)
        # the method hashes or compares its arguments (and a list its items) natively
        ops.weigh([args, kw, obj if name in SCANS else ()], it.budget, where)
        if name in COMPARES and custom_equality(it, [*args, *(obj if name in SCANS else ())]):
            raise Unknown(f"{name}() comparing instances with their own == not evaluated", *where)
        if name in CHANGES:
            concretize(*args, *kw.values())  # kept beyond the run: a real str only
            it.mutated(obj, [*args, *kw.values()])
        # a str method needs str arguments (a str enum's member is one); a container
        # keeps what it is given (its items compare and hash as they are)
        plain_args = [plain.plain_value(a) for a in args] if isinstance(obj, str) else list(args)
        if name in ("join",) and args:
            plain_args = [[plain.plain_value(x) for x in it.iterate(args[0], node, path)]]
            formatting.join_size(obj, plain_args[0], where)
        if name in ("extend", "update", "union", "intersection", "difference", "issubset"):
            plain_args = [a if isinstance(a, dict) else it.iterate(a, node, path) for a in args]
        if name == "get" and type(obj) is dict and args and is_abstract(args[0]) and not kw:
            return ops.check_size(
                dict_get(obj, args[0], args[1] if len(args) > 1 else None), where
            )
        try:
            result = attr(*plain_args, **kw)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError) as exc:
            raise Raised(type(exc).__name__, str(exc)) from None
        if isinstance(result, dict_views):
            result = list(result)  # type: ignore[call-overload,unused-ignore]
        if name in ("get", "pop", "setdefault", "index", "count"):
            return ops.check_size(result, where)  # an item, not a new value
        return ops.paid(result, it.budget, where)

    return Builtin(f"{type(obj).__name__}.{name}", run)


def abstract_method(value: AbstractStr, name: str) -> Builtin:
    """``startswith`` / ``endswith`` of an abstract string (see .abstract_str), charged
    as a real string's method is; any other attribute gives the run up."""
    if name not in TESTS:
        raise value.explorer.give_up()

    def run(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
        where = ops.node_where(node, path)
        ops.weigh([args, kw, ()], it.budget, where)
        return test_method(value, name, [plain.plain_value(a) for a in args], kw)

    return Builtin(f"{TESTED_BY}{name}", run)


#: Methods that compare their argument with every item natively.
SCANS = frozenset({"index", "count", "remove"})
#: Methods that change their list, dict or set.
CHANGES = frozenset(
    {"append", "extend", "insert", "pop", "remove", "update", "setdefault", "add", "discard"}
)
#: Methods that compare their argument with items or keys natively.
COMPARES = SCANS | {"get", "pop", "setdefault", "add", "discard"}


def custom_equality(it: Interpreter, values: Value) -> bool:
    """Whether one of ``values`` is an instance whose ``==`` is not identity (a
    dataclass, a class defining ``__eq__``): native comparison would not call it."""
    return any(
        isinstance(value, Instance)
        and value.items is None
        and (value.by_fields or it.defines(value.cls, "__eq__") is not None)
        for value in values
    )


dict_views: tuple[type, ...] = (type({}.keys()), type({}.values()), type({}.items()))

SAFE_METHODS = {
    str: {
        "lower",
        "upper",
        "strip",
        "lstrip",
        "rstrip",
        "startswith",
        "endswith",
        "split",
        "join",
        "replace",
        "removeprefix",
        "removesuffix",
        "isdigit",
        "isidentifier",
        "rsplit",
        "partition",
        "rpartition",
        "count",
        "find",
        "capitalize",
        "title",
    },
    list: {"append", "extend", "insert", "index", "count", "copy", "pop", "remove"},
    tuple: {"index", "count"},
    dict: {"get", "items", "keys", "values", "copy", "update", "setdefault", "pop"},
    set: {"add", "union", "intersection", "difference", "issubset", "copy", "discard"},
    frozenset: {"union", "intersection", "difference", "issubset"},
}


def method_of(obj: Value, name: str) -> Value:
    if type(obj) is AbstractStr:
        return abstract_method(obj, name)
    for kind, names in SAFE_METHODS.items():
        if type(obj) is kind and name in names:
            if name in ("replace",) and isinstance(obj, str):
                return _sized_replace(obj)
            return _method(obj, name)
    return MISSING


def _sized_replace(text: str) -> Builtin:
    def run(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
        old, new = plain.plain_value(args[0]), plain.plain_value(args[1])
        count = args[2] if len(args) > 2 else kw.get("count", -1)
        if not isinstance(old, str) or not isinstance(new, str) or not isinstance(count, int):
            raise Raised("TypeError", "replace() arguments must be str (and an int count)")
        found = text.count(old) if old else len(text) + 1
        growth = (len(new) - len(old)) * (found if count < 0 else min(found, count))
        if len(text) + max(growth, 0) > ops.MAX_ITEMS:
            raise LimitExceeded(
                "string too long to evaluate", *ops.node_where(node, path), kind="size"
            )
        return text.replace(old, new, count)

    return Builtin("str.replace", run)
