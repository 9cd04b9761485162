"""What the standard library and ``typing`` answer the same on every machine.

Pure functions on known values (``math``, POSIX path strings), typing helpers
(``cast``, ``get_args`` of a ``Literal``), ``functools`` caches and the
decorators that do not change what a function answers: Python's own answers,
with no fact about a machine in them (those are a :class:`.world.World`'s).
"""

from __future__ import annotations

import ast
import math
import posixpath
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval.scope import MISSING, Scope
from sphinxext_attn.pyeval.values import (
    Builtin,
    External,
    Foreign,
    PyClass,
    PyFunction,
    Raised,
    Unknown,
    Value,
)

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter

#: Decorators that do not change what a function answers.
TRANSPARENT_DECORATORS = frozenset(
    {
        "abc.abstractmethod",
        "functools.cache",
        "functools.lru_cache",
        "functools.wraps",
        "typing.override",
        "typing_extensions.override",
        "typing.final",
        "typing_extensions.deprecated",
        "staticmethod",
    }
)

#: Pure functions of the standard library, evaluated on known numbers.
MATH: dict[str, Callable[..., int | float]] = {
    "math.gcd": math.gcd,
    "math.lcm": math.lcm,
    "math.ceil": math.ceil,
    "math.floor": math.floor,
    "math.log2": math.log2,
    "math.sqrt": math.sqrt,
}


class LiteralType:
    """``Literal["auto", "fp8", ...]``: its arguments, for ``get_args``."""

    def __init__(self, items: tuple[Value, ...]) -> None:
        self.items = items


def label(value: Value) -> str:
    """A value as a fact or a type argument names it (``torch.float16``, a class name)."""
    if isinstance(value, External):
        return value.qualname
    if isinstance(value, PyClass):
        return value.name
    return repr(value)


def call(name: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
    """The answer of the call ``name(*args, **kwargs)`` where Python's is the same
    on every machine; MISSING when it is not such a call."""
    if name in ("os.path.join", "os.path.dirname", "os.path.basename") and all(
        isinstance(a, str) for a in args
    ):  # string functions (POSIX paths); nothing on disk is read
        return getattr(posixpath, name.rsplit(".", 1)[1])(*args)
    if name == "enum.auto":
        return External("enum.auto()")
    if name in MATH and all(isinstance(a, int | float) and not isinstance(a, bool) for a in args):
        try:
            result = MATH[name](*args)
        except (ValueError, TypeError, OverflowError) as exc:
            raise Raised(type(exc).__name__, str(exc)) from None
        return MISSING if isinstance(result, int) and result.bit_length() > 4096 else result
    if name in ("typing.cast", "typing_extensions.cast") and len(args) == 2:
        return args[1]
    if name in ("typing.get_args", "typing_extensions.get_args") and len(args) == 1:
        literal = args[0]  # (with other arguments Python raises TypeError: unknown here)
        return tuple(literal.items) if isinstance(literal, LiteralType) else MISSING
    if name in ("functools.cache", "functools.lru_cache") and len(args) == 1 and not kwargs:
        return args[0] if isinstance(args[0], PyFunction) else External(f"{name}()")
    if name == "functools.lru_cache":
        return External("functools.lru_cache()")
    if name == "functools.lru_cache()" and len(args) == 1:
        return args[0]
    return MISSING


def subscript(value: External, index: Value) -> Value:
    """``value[index]`` of a name outside the tree (``Literal[...]`` keeps its items)."""
    items = index if isinstance(index, tuple) else (index,)
    return (
        External(f"{value.qualname}[{', '.join(label(i) for i in items)}]")
        if value.qualname not in ("typing.Literal", "typing_extensions.Literal")
        else LiteralType(items)
    )


def decorator_kind(
    interp: Interpreter, func: PyFunction, decorator: ast.expr, scope: Scope
) -> str:
    """The kind a decorator gives a function (classmethod, property, ...)."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    try:
        value = interp.eval(target, scope)
    except Unknown:
        return "opaque"
    if isinstance(value, Builtin) and value.name in (
        "classmethod",
        "staticmethod",
        "property",
    ):
        return value.name
    if isinstance(value, External):
        if value.qualname == "functools.cached_property":
            return "property"
        if value.qualname in TRANSPARENT_DECORATORS:
            func.cached |= value.qualname in ("functools.cache", "functools.lru_cache")
            return func.kind
    if isinstance(value, PyFunction) and value.name in ("cache", "lru_cache"):
        func.cached = True
        return func.kind
    if isinstance(value, PyFunction) and isinstance(decorator, ast.Name | ast.Attribute):
        # a decorator written in the tree: run when the function is called
        func.wrappers = (*func.wrappers, decorator)
        return func.kind
    return "opaque"


# -- regular expressions the tree matches against known text --------------------------
#: The longest text a pattern of the tree is matched against (an arch name is short).
MAX_MATCHED = 200
REGEX_FUNCTIONS = ("match", "fullmatch", "search")


class MatchResult(Foreign):
    """A match of ``re.match``/``regex.match``: ``group()``, ``groups()``, ``span()``."""

    def __init__(self, match: re.Match[str]) -> None:
        self.match = match

    def attr(self, name: str) -> Builtin | None:
        if name not in ("group", "groups", "start", "end", "span", "groupdict"):
            return None
        method = getattr(self.match, name)

        def run(
            it: Interpreter, args: list[Value], kw: dict[str, Value], node: ast.AST, path: str
        ) -> Value:
            try:
                return method(*args, **kw)
            except (IndexError, TypeError) as exc:
                raise Raised(type(exc).__name__, str(exc)) from None

        return Builtin(f"Match.{name}", run)


def regex_call(name: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
    """``re.match(pattern, text)`` (or ``regex``'s) on a literal pattern and a known
    short text; MISSING when this is not such a call."""
    module, _, function = name.rpartition(".")
    if module not in ("re", "regex") or function not in REGEX_FUNCTIONS or kwargs:
        return MISSING
    if len(args) != 2 or not all(type(a) is str for a in args) or len(args[1]) > MAX_MATCHED:
        return MISSING
    try:
        found = getattr(re, function)(args[0], args[1])
    except re.error as exc:  # named as this Python names it (3.13: PatternError)
        raise Raised(type(exc).__name__, str(exc), bases=("Exception",)) from None
    return None if found is None else MatchResult(found)
