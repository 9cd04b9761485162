"""Builtin functions that the evaluator implements (methods of plain values: :mod:`.methods`).

Each takes ``(interp, args, kwargs, node, path)``; sizes are checked so no
builtin can allocate without bound (``range(10**12)`` is unknown, not built).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval import abstract, abstract_str, ops, plain
from sphinxext_attn.pyeval.members import PLAIN_TYPES, class_mro
from sphinxext_attn.pyeval.values import (
    Bound,
    Builtin,
    EnumMember,
    External,
    Instance,
    LazyGen,
    LimitExceeded,
    PyClass,
    PyFunction,
    Raised,
    Unknown,
    Value,
)

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter

Args = list[Value]
Kw = dict[str, Value]


def _len(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
    value = args[0]
    if isinstance(value, Instance) and value.items is not None:
        return len(value.items)
    if isinstance(value, str | list | tuple | dict | set | frozenset | range):
        return len(value)
    raise Unknown(f"len() of {type(value).__name__} not evaluated", *ops.node_where(node, path))


def _items(it: Interpreter, args: Args, node: ast.AST, path: str) -> list[Value]:
    if len(args) == 1:
        return it.iterate(args[0], node, path)
    return list(args)


def _key(it: Interpreter, kw: Kw, node: ast.AST, path: str) -> Value:
    fn = kw.get("key")
    if fn is None:
        return lambda v: plain.plain_value(v)
    return lambda v: plain.plain_value(it.call(fn, [v], {}, node, path))


def _minmax(pick: Value) -> Value:
    def run(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
        if not args:
            raise Raised("TypeError", "expected at least 1 argument, got 0")
        if "default" in kw and len(args) != 1:
            raise Raised(
                "TypeError", "Cannot specify a default with multiple positional arguments"
            )
        items = _items(it, args, node, path)
        if not items:
            if "default" in kw:
                return kw["default"]
            raise Raised("ValueError", "empty sequence")
        key = _key(it, kw, node, path)
        keyed = [(key(v), v) for v in _walked(it, items, node, path)]
        try:
            return pick(keyed, key=lambda p: p[0])[1]
        except TypeError:
            raise Unknown(
                "min/max of values that do not order", *ops.node_where(node, path)
            ) from None

    return run


def _anyall(want: bool) -> Value:
    def run(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
        source = args[0]
        items = source.items if isinstance(source, LazyGen) else it.iterate(source, node, path)
        for value in items:  # a generator expression's items only up to the answer
            it.budget.tick(node, path)
            if it.truth(value, node, path) is want:
                return want
        return not want

    return run


def _sorted(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
    items = _walked(it, it.iterate(args[0], node, path), node, path)
    key = _key(it, kw, node, path)
    try:
        return sorted(items, key=key, reverse=bool(kw.get("reverse", False)))
    except TypeError:
        raise Unknown("sorting values that do not order", *ops.node_where(node, path)) from None


def _walked(it: Interpreter, items: list[Value], node: ast.AST, path: str) -> list[Value]:
    """``items`` about to be compared natively (sorted, min, max): a step each,
    and the walk of nested values charged first."""
    where = ops.node_where(node, path)
    it.budget.spend(len(items), where)
    ops.weigh(items, it.budget, where)
    return items


def is_instance(it: Interpreter, value: Value, kind: Value, node: ast.AST, path: str) -> bool:
    if isinstance(kind, tuple):
        return any(is_instance(it, value, k, node, path) for k in kind)
    if abstract_str.is_abstract(value):  # a str, whatever its value
        if isinstance(kind, Builtin) and kind.name in PLAIN_TYPES:
            return issubclass(str, PLAIN_TYPES[kind.name])
        abstract_str.concretize(value)
    if isinstance(value, abstract.AbstractInt):  # an int, whatever its value
        if isinstance(kind, Builtin) and kind.name in PLAIN_TYPES:
            return PLAIN_TYPES[kind.name] is int
        if isinstance(kind, PyClass):
            return False
    if isinstance(kind, Builtin) and kind.name in PLAIN_TYPES:
        py = PLAIN_TYPES[kind.name]
        if isinstance(value, EnumMember):
            return plain.enum_is_plain(value) and isinstance(value.value, py)
        if isinstance(value, Instance) and value.items is not None:
            return py is tuple  # a named tuple is a tuple
        return isinstance(value, py)  # a bool is an int, as in Python
    if isinstance(kind, PyClass):
        if isinstance(value, Instance):
            return kind in class_mro(value.cls, it)
        if isinstance(value, EnumMember):
            return kind in class_mro(value.cls, it)
        if isinstance(value, int | float | str | list | tuple | dict | set | type(None)):
            return False
        if isinstance(value, PyClass):
            return False
    if isinstance(kind, External) and kind.qualname == "builtins.type":
        return isinstance(value, PyClass)
    raise Unknown("isinstance() with a type outside the tree", *ops.node_where(node, path))


def _isinstance(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
    return is_instance(it, args[0], args[1], node, path)


def _issubclass(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
    value, kind = args
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, PyClass) and all(isinstance(k, PyClass) for k in kinds):
        return any(k in class_mro(value, it) for k in kinds)
    raise Unknown("issubclass() with a type outside the tree", *ops.node_where(node, path))


def _getattr(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
    if not isinstance(args[1], str):
        raise Raised("TypeError", "attribute name must be string")
    try:
        return it.getattr(args[0], args[1], node, path)
    except Raised as exc:
        if exc.matches("AttributeError") and len(args) > 2:
            return args[2]
        raise


def _hasattr(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
    try:
        it.getattr(args[0], args[1], node, path)
    except Raised as exc:
        if exc.matches("AttributeError"):
            return False
        raise
    return True


def _convert(kind: str) -> Value:
    py = PLAIN_TYPES[kind]

    def run(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
        if kind == "dict":
            if len(args) > 1:
                raise Raised("TypeError", f"dict expected at most 1 argument, got {len(args)}")
            value = args[0] if args else {}
            items = value.items() if isinstance(value, dict) else it.iterate(value, node, path)
            return {**_pairs(it, items, node, path), **kw}
        if kw or len(args) > (2 if kind == "int" else 1):
            raise Unknown(
                f"{kind}() with these arguments not evaluated", *ops.node_where(node, path)
            )
        if not args:
            return py()
        if kind == "int" and len(args) == 1 and isinstance(args[0], abstract.AbstractInt):
            return args[0]
        if kind == "str" and isinstance(args[0], EnumMember):
            return it.enum_text(args[0], -1, "", node, path)
        ops.weigh(
            args[0], it.budget, ops.node_where(node, path)
        )  # plain_value copies named tuples
        value = plain.plain_value(args[0])
        if kind == "str" and isinstance(value, External) and not ops.torch_symbol(value):
            raise Unknown(f"str() of {value.qualname} not evaluated", *ops.node_where(node, path))
        if kind == "bool":
            return it.truth(value, node, path)
        if kind in ("list", "tuple"):
            return py(it.iterate(value, node, path))
        if kind in ("set", "frozenset"):
            return py(it.make_set(it.iterate(value, node, path), node, path))
        if isinstance(value, int | float | str | bool):
            try:
                if kind == "int" and len(args) > 1:
                    if not isinstance(value, str):  # as CPython says it
                        raise TypeError("int() can't convert non-string with explicit base")
                    return ops.check_size(int(value, args[1]), ops.node_where(node, path))
                return ops.check_size(py(value), ops.node_where(node, path))
            except (ValueError, TypeError, OverflowError) as exc:
                raise Raised(type(exc).__name__, str(exc)) from None
        raise Unknown(
            f"{kind}() of {type(value).__name__} not evaluated", *ops.node_where(node, path)
        )

    return run


def _pairs(it: Interpreter, items: Value, node: ast.AST, path: str) -> dict[Value, Value]:
    out: dict[Value, Value] = {}
    for pair in items:
        pair = it.iterate(pair, node, path)
        if len(pair) != 2:
            raise Raised("ValueError", "dictionary update sequence element has wrong length")
        out[it.hashable(pair[0], node, path)] = pair[1]
    return out


def _range(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
    args = [plain.plain_value(a) for a in args]  # an IntEnum member is an int
    if not all(isinstance(a, int) for a in args):
        raise Raised("TypeError", "range() needs integers")
    try:
        result = range(*args)
    except ValueError as exc:
        raise Raised("ValueError", str(exc)) from None
    if len(result) > ops.MAX_ITEMS:
        raise LimitExceeded("range too long to evaluate", *ops.node_where(node, path), kind="size")
    return result


def _enumerate(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
    start = args[1] if len(args) > 1 else kw.get("start", 0)
    items = it.iterate(args[0], node, path)
    ops.charge(it.budget, 64 * len(items), ops.node_where(node, path))
    return list(enumerate(items, start))


def _zip(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
    columns = [it.iterate(a, node, path) for a in args]
    ops.charge(it.budget, 64 * min(map(len, columns), default=0), ops.node_where(node, path))
    if kw.get("strict") and len({len(c) for c in columns}) > 1:
        raise Raised("ValueError", "zip() arguments have different lengths")
    return list(zip(*columns, strict=False))


def _reversed(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
    return list(reversed(it.iterate(args[0], node, path)))


def _sum(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
    total = args[1] if len(args) > 1 else kw.get("start", 0)
    if isinstance(total, str):
        raise Raised("TypeError", "sum() can't sum strings [use ''.join(seq) instead]")
    items = it.iterate(args[0], node, path)
    it.budget.spend(3 * len(items), ops.node_where(node, path))  # as a loop of ``total + item``
    for value in items:
        total = ops.binop(ast.Add(), total, value, ops.node_where(node, path), it.budget)
    return total


def _abs(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
    if isinstance(args[0], int | float):
        return abs(args[0])
    raise Unknown("abs() of a non-number", *ops.node_where(node, path))


def _type(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
    if len(args) == 3:
        raise Unknown("a class made by type() not evaluated", *ops.node_where(node, path))
    if len(args) != 1 or kw:
        raise Raised("TypeError", "type() takes 1 or 3 arguments")
    value = args[0]
    if isinstance(value, Instance | EnumMember):
        return value.cls
    for name, py in PLAIN_TYPES.items():
        if type(value) is py:
            return BUILTINS[name]
    raise Unknown("type() of this value not evaluated", *ops.node_where(node, path))


def _callable(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
    value = args[0]
    if isinstance(value, PyFunction | Bound | Builtin | PyClass | External):
        return True  # an External is a function of an installed package
    if isinstance(value, Instance):  # an instance whose class defines __call__
        return it.defines(value.cls, "__call__") is not None
    return False


def _none(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
    return None


def _decorator(name: str) -> Value:
    def run(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
        raise Unknown(f"{name}() called directly", *ops.node_where(node, path))

    return run


def _unevaluated(name: str) -> Value:
    def run(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
        raise Unknown(f"{name}() not evaluated", *ops.node_where(node, path))

    return run


_FUNCTIONS = {
    "len": _len,
    "min": _minmax(min),
    "max": _minmax(max),
    "any": _anyall(True),
    "all": _anyall(False),
    "sorted": _sorted,
    "isinstance": _isinstance,
    "issubclass": _issubclass,
    "getattr": _getattr,
    "hasattr": _hasattr,
    "range": _range,
    "enumerate": _enumerate,
    "zip": _zip,
    "reversed": _reversed,
    "sum": _sum,
    "abs": _abs,
    "type": _type,
    "print": _none,
    "callable": _callable,
    "super": _unevaluated("super with arguments"),
    "classmethod": _decorator("classmethod"),
    "staticmethod": _decorator("staticmethod"),
    "property": _decorator("property"),
    "open": _unevaluated("open"),
    "exec": _unevaluated("exec"),
    "eval": _unevaluated("eval"),
    "compile": _unevaluated("compile"),
    "__import__": _unevaluated("__import__"),
    "iter": _unevaluated("iter"),
    "next": _unevaluated("next"),
    "setattr": _unevaluated("setattr"),
    "vars": _unevaluated("vars"),
    "globals": _unevaluated("globals"),
    "locals": _unevaluated("locals"),
}
#: The most positional arguments a builtin takes, and whether it takes keywords: a
#: call with more is CPython's TypeError, not an answer read from the first ones.
_ARITY: dict[str, tuple[int, bool]] = {
    "len": (1, False), "abs": (1, False), "callable": (1, False), "reversed": (1, False),
    "any": (1, False), "all": (1, False), "isinstance": (2, False), "issubclass": (2, False),
    "hasattr": (2, False), "getattr": (3, False), "range": (3, False), "enumerate": (2, True),
    "sum": (2, True), "sorted": (1, True),
}  # fmt: skip


def _checked(name: str, fn: Value) -> Value:
    most, keywords = _ARITY[name]

    def run(it: Interpreter, args: Args, kw: Kw, node: ast.AST, path: str) -> Value:
        if len(args) > most:
            raise Raised("TypeError", f"{name}() takes at most {most} positional arguments")
        if kw and not keywords:
            raise Raised("TypeError", f"{name}() takes no keyword arguments")
        return fn(it, args, kw, node, path)

    return run


BUILTINS: dict[str, Builtin] = {
    name: Builtin(name, _checked(name, fn) if name in _ARITY else fn)
    for name, fn in _FUNCTIONS.items()
}
BUILTINS.update({name: Builtin(name, _convert(name)) for name in PLAIN_TYPES})
