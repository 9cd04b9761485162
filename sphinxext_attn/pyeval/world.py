"""The world outside the analysed tree: what the interpreter asks when the code
reaches a name, call, attribute or import the tree does not define.

:class:`World` knows plain Python only (the standard library and ``typing``
answer the same on every machine); anything else from outside is an
:class:`External` name the caller cannot evaluate. A library's knowledge (what
a helper answers on some machine, which platform is current) plugs in from
outside the evaluator as a subclass, the way astroid's brain modules register
theirs: ``Interpreter(tree, world)``. The evaluator itself never names a library.
"""

from __future__ import annotations

import ast
import math
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval import stdlib
from sphinxext_attn.pyeval.scope import MISSING, Scope
from sphinxext_attn.pyeval.values import (
    External,
    Foreign,
    PyFunction,
    Raised,
    Unknown,
    Value,
    line_of,
)

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter
    from sphinxext_attn.pyeval.scope import ModuleScope


class World:
    """Plain Python's answers for what lies outside the tree; every hook returns
    ``MISSING`` (or raises what Python would) where it has nothing to say, and a
    subclass adds a library's answers before deferring here."""

    MISSING = MISSING

    # -- names and modules ---------------------------------------------------------
    def module_attr(self, interp: Interpreter, dotted: str, name: str) -> Value:
        """``module.name`` answered before the tree's module is read (a name the
        library sets at run time); MISSING: the module's own binding."""
        return MISSING

    def absent_module_attr(
        self, interp: Interpreter, mod: ModuleScope, name: str, node: ast.AST
    ) -> Value:
        """``module.name`` that the module neither binds nor holds as a submodule."""
        raise Raised("AttributeError", f"module {mod.dotted} has no attribute {name}")

    def check_built_module(self, interp: Interpreter, dotted: str) -> None:
        """An import from a module of the analysed package that the tree does not
        hold (one its build writes): succeeds unless the world says otherwise."""

    def external_attr(self, interp: Interpreter, obj: External, name: str) -> Value:
        """An attribute of a name from outside the tree: ``typing.TYPE_CHECKING`` is
        false, ``math``'s float constants are this Python's; else a longer name."""
        qualname = f"{obj.qualname}.{name}"
        if qualname in ("typing.TYPE_CHECKING", "typing_extensions.TYPE_CHECKING"):
            return False
        if obj.qualname == "math":  # this Python's own constants; no such name: an error
            if not hasattr(math, name):
                raise Raised("AttributeError", f"module 'math' has no attribute {name!r}")
            if isinstance(getattr(math, name), float):
                return getattr(math, name)
        return External(qualname)

    def external_truth(self, value: External, node: ast.AST, path: str) -> bool:
        raise Unknown(f"truth of {value.qualname} (outside the tree)", path, line_of(node))

    def external_subscript(self, interp: Interpreter, value: External, index: Value) -> Value:
        """``value[index]`` of a name outside the tree (``Literal[...]`` keeps its items)."""
        return stdlib.subscript(value, index)

    def compare(
        self, interp: Interpreter, op: ast.cmpop, left: Value, right: Value
    ) -> bool | None:
        """A comparison with a name from outside the tree that the world answers
        (None: compared as plain values are)."""
        return None

    # -- calls -------------------------------------------------------------------------
    def call_external(
        self, interp: Interpreter, func: External, args: list[Value], kwargs: dict[str, Value]
    ) -> Value:
        """A call of a function from outside the tree: Python's answer where it is
        the same on every machine; MISSING (unknown) otherwise."""
        name = func.qualname
        answer = stdlib.call(name, args, kwargs)
        if answer is not MISSING:
            return answer
        if name == "importlib.import_module" and args and isinstance(args[0], str):
            module = interp.module(args[0])
            if module is not None:
                return module
            return MISSING
        return stdlib.regex_call(name, args, kwargs)

    def function_hook(
        self, interp: Interpreter, func: PyFunction, args: list[Value], kwargs: dict[str, Value]
    ) -> Value:
        """A function of the tree the world answers for instead of its body (one
        that asks the hardware, say); MISSING: its body runs."""
        return MISSING

    def decorate(
        self, interp: Interpreter, func: PyFunction, decorator: ast.expr, scope: Scope
    ) -> str:
        """The kind a decorator gives a function (classmethod, property, ...)."""
        return stdlib.decorator_kind(interp, func, decorator, scope)

    def foreign_attr(self, interp: Interpreter, obj: Foreign, name: str, path: str) -> Value:
        """An attribute of an object a world made (a regex match); MISSING: none."""
        if isinstance(obj, stdlib.MatchResult):
            found = obj.attr(name)
            if found is not None:
                return found
        return MISSING


__all__ = ["World"]
