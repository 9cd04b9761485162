"""The call memo: a function's answer, keyed by the arguments it read.

A call of a tree function is remembered under the values of the parameters
its body actually looked up (recorded by its frame, see ``Frame.reads``), the
binding shape (how many positional arguments, which keywords), the device
capability if the call read it (a call that did not answers for every GPU, so
a question re-asked per GPU reuses the helpers that do not look at it) and
the count of class attribute writes so far. So
``supports_combination(head_size, dtype, ..., has_sink, ...)``, which only
looks at ``has_sink`` when it is False, is evaluated once for every
configuration with ``has_sink=False``. A later call is looked up under each
set of parameters the function was seen to read: if an earlier run read only
those parameters, with these values, this run takes the same path.

Functions whose body names ``super``, ``locals`` and the like (they read the
frame itself) and closures (they read their defining frame) are keyed by
every argument. A read parameter whose value is mutable is not remembered.
"""

from __future__ import annotations

import ast
from collections.abc import Hashable
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval.bindings import function_locals
from sphinxext_attn.pyeval.scope import ClassBodyScope, Frame
from sphinxext_attn.pyeval.stmtmemo import (
    KEY_KEPT,
    KEY_PLAIN,
    NO_KEY,
    Key,
    key_part,
    reads_frame,
)
from sphinxext_attn.pyeval.values import CAPABILITY, PyFunction, Value

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter
    from sphinxext_attn.pyeval.scope import Scope

#: A parameter not passed: its default (evaluated in the defining scope).
_DEFAULT = ("default",)
#: A parameter not passed whose default may be a mutable object (``v=[]``): one
#: object shared by every call, which a call may change, so never a key.
_SHARED = object()
_CONSTANT_DEFAULTS = (ast.Constant, ast.Name, ast.Attribute)
#: The capability part of the key of a call that did not read the device capability.
_ANY_GPU = ("any GPU",)


class _Signature:
    """Where each parameter of a function comes from in a call."""

    __slots__ = (
        "kwarg",
        "locals",
        "named",
        "names",
        "params",
        "position",
        "posonly",
        "shared",
        "tracked",
        "vararg",
    )

    def __init__(self, func: PyFunction) -> None:
        spec = func.node.args
        self.posonly = len(spec.posonlyargs)
        self.names = [a.arg for a in (*spec.posonlyargs, *spec.args)]
        self.position = {name: i for i, name in enumerate(self.names)}
        #: parameters a keyword argument binds (the rest go to ``**kwargs``)
        self.named = {*self.names[self.posonly :], *(a.arg for a in spec.kwonlyargs)}
        self.vararg = spec.vararg.arg if spec.vararg else None
        self.kwarg = spec.kwarg.arg if spec.kwarg else None
        self.params = (
            *self.names,
            *(a.arg for a in spec.kwonlyargs),
            *(n for n in (self.vararg, self.kwarg) if n),
        )
        positional = [*spec.posonlyargs, *spec.args]
        pairs = [
            *zip(positional[len(positional) - len(spec.defaults) :], spec.defaults, strict=True),
            *zip(spec.kwonlyargs, spec.kw_defaults, strict=True),
        ]
        #: parameters whose default is not a constant, a name or an attribute
        self.shared = {a.arg for a, d in pairs if d is not None and not _constant_default(d)}
        # super() reads the first argument without naming it: keyed by every parameter
        # (a closure, which reads its defining frame, is never remembered)
        self.tracked = not reads_frame(func.node)
        #: what the body binds: read before bound, never a name of an enclosing scope
        self.locals = function_locals(func.node)

    def value(self, name: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
        if name == self.kwarg:
            extra = {k: v for k, v in kwargs.items() if k not in self.named}
            return extra or _DEFAULT  # a dict is mutable: unkeyable unless empty
        if name == self.vararg:
            return tuple(args[len(self.names) :])
        i = self.position.get(name, -1)
        if (i < 0 or i >= self.posonly) and kwargs and name in kwargs:
            return kwargs[name]
        if 0 <= i < len(args):
            return args[i]
        return _SHARED if name in self.shared else _DEFAULT


def _constant_default(node: ast.expr) -> bool:
    """A constant, name or attribute, negated or in tuples (walked without
    recursion: a hostile default may nest thousands deep)."""
    todo = [node]
    while todo:
        item = todo.pop()
        if isinstance(item, ast.Tuple):
            todo.extend(item.elts)
        elif isinstance(item, ast.UnaryOp):
            todo.append(item.operand)
        elif not isinstance(item, _CONSTANT_DEFAULTS):
            return False
    return True


def _in_frame(scope: Scope | None) -> bool:
    while isinstance(scope, ClassBodyScope):
        scope = scope.parent
    return isinstance(scope, Frame)


#: call signatures by function node
Signatures = dict[ast.AST, _Signature]


class CallMemo:
    """Per interpreter: answers by (function, read parameters and their values)."""

    def __init__(self, signatures: Signatures | None = None) -> None:
        #: by function node (a signature is the node's alone: one for every function
        #: object a ``def`` run many times makes), the interpreter's: kept when a
        #: question asks with fresh memos
        self.signatures: Signatures = signatures if signatures is not None else {}
        #: the parameter sets each function was seen to read, and whether it read
        #: the device capability, newest last
        self.read_sets: dict[PyFunction, list[tuple[tuple[str, ...], bool]]] = {}
        self.answers: dict[Key, tuple[bool, Value, int]] = {}

    def signature(self, func: PyFunction) -> _Signature:
        sig = self.signatures.get(func.node)
        if sig is None:
            sig = self.signatures[func.node] = _Signature(func)
        return sig

    def _key(
        self,
        interp: Interpreter,
        func: PyFunction,
        sig: _Signature,
        read: tuple[str, ...],
        args: list[Value],
        kwargs: dict[str, Value],
        by_gpu: bool = True,
    ) -> Key | None:
        parts: list[Hashable] = [func, len(args), tuple(sorted(kwargs)) if kwargs else ()]
        capability = interp.capability if by_gpu else _ANY_GPU
        # a class or global set since: ask again (``functools.cache`` does not)
        parts += (read, capability, 0 if func.cached else interp.class_writes)
        append = parts.append
        for name in read:
            value = sig.value(name, args, kwargs)
            kind = type(value)
            if kind in KEY_PLAIN:
                append((kind, value))
            elif kind in KEY_KEPT or value is _DEFAULT:
                append(value)
            elif value is _SHARED and func.cached:
                append(_DEFAULT)  # ``functools.cache`` keys on what was passed, as CPython's
            else:
                part = key_part(value)
                if part is NO_KEY:
                    return None
                append(part)
        return tuple(parts)

    def lookup(
        self, interp: Interpreter, func: PyFunction, args: list[Value], kwargs: dict[str, Value]
    ) -> tuple[bool, Value, int] | None:
        if func.name in interp.lenient_functions or _in_frame(func.scope):
            # asked once per configuration (its checks are remembered); a closure
            # reads its defining frame, whose names may have changed since
            return None
        sig = self.signature(func)
        for read, by_gpu in reversed(self.read_sets.get(func, ())):
            key = self._key(interp, func, sig, read, args, kwargs, by_gpu)
            if key is not None:
                found = self.answers.get(key)
                if found is not None:
                    return found
        return None

    def forget(self, func: PyFunction) -> None:
        """``func.cache_clear()``: its next calls run again."""
        if self.read_sets.pop(func, None) is not None:
            self.answers = {k: v for k, v in self.answers.items() if k[0] is not func}

    def reads(self, func: PyFunction) -> dict[str, None] | None:
        """A record for the frame to note its lookups in, or None (keyed by all, or a
        closure: not remembered)."""
        if _in_frame(func.scope):
            return None
        return {} if self.signature(func).tracked else None

    #: Statements of list-of-reasons functions (see stmtmemo) are remembered one by
    #: one instead: the whole call is asked once per configuration.

    def store(
        self,
        interp: Interpreter,
        func: PyFunction,
        args: list[Value],
        kwargs: dict[str, Value],
        looked_up: dict[str, None] | None,
        answer: tuple[bool, Value, int],
    ) -> None:
        if func.name in interp.lenient_functions or _in_frame(func.scope):
            return
        sig = self.signature(func)
        read = sig.params if looked_up is None else tuple(p for p in sig.params if p in looked_up)
        by_gpu = bool(
            answer[2] & CAPABILITY
        )  # a call that never read the GPU answers for every GPU
        seen = self.read_sets.setdefault(func, [])
        if (read, by_gpu) not in seen:
            seen.append((read, by_gpu))
        key = self._key(interp, func, sig, read, args, kwargs, by_gpu)
        if key is not None:
            self.answers[key] = answer
