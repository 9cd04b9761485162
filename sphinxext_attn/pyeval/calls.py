"""Calls: functions and methods of the tree, builtins (creating instances: :mod:`.instances`).

Calls are memoised per device capability, by the arguments they read (see
:mod:`.callmemo`), so a classmethod asked the same question twice answers
the same (``supports_head_size(128)`` is evaluated once per backend however
many configurations ask it). A call that changed a class, or a value a module
or class holds, is not remembered, and the change makes later calls ask again
(see ``Interpreter.mutated``); a closure is never remembered.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval import abstract, abstract_str
from sphinxext_attn.pyeval.builtins import BUILTINS
from sphinxext_attn.pyeval.instances import instantiate
from sphinxext_attn.pyeval.members import PLAIN_TYPES
from sphinxext_attn.pyeval.methods import method_of
from sphinxext_attn.pyeval.scope import MISSING, Frame, Scope, cached, remember
from sphinxext_attn.pyeval.values import (
    Bound,
    Builtin,
    External,
    LazyGen,
    LimitExceeded,
    PyClass,
    PyFunction,
    Raised,
    SuperProxy,
    Unknown,
    Value,
    line_of,
    out_of_steps,
)

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter


def call_node(interp: Interpreter, node: ast.Call, scope: Scope) -> Value:
    func = interp.eval(node.func, scope)
    args: list[Value] = []
    for arg in node.args:
        if isinstance(arg, ast.Starred):
            args.extend(interp.iterate(interp.eval(arg.value, scope), arg, scope.module.path))
        else:
            args.append(interp.eval(arg, scope))
    kwargs: dict[str, Value] = {}
    for kw in node.keywords:
        value = interp.eval(kw.value, scope)
        named = value if kw.arg is None else {kw.arg: value}
        if not isinstance(named, dict):
            raise Unknown("** of a non-dict", scope.module.path, node.lineno)
        for name, item in named.items():
            if not isinstance(name, str):
                raise Raised("TypeError", "keywords must be strings")
            if name in kwargs:
                raise Raised("TypeError", f"got multiple values for keyword argument {name!r}")
            kwargs[name] = item
    if isinstance(func, Builtin) and func.name == "super" and not args:
        return _super(interp, scope, node)
    return call(interp, func, args, kwargs, node, scope.module.path)


def _super(interp: Interpreter, scope: Scope, node: ast.AST) -> SuperProxy:
    """``super()``: of the method whose frame it runs in, through comprehensions (as
    Python 3.12 inlines them); a function or lambda nested in the method has no
    first argument of its own (Python raises RuntimeError), so it is unknown."""
    frame: Scope | None = scope
    while isinstance(frame, Frame) and frame.comprehension:
        frame = frame.parent
    if not isinstance(frame, Frame) or frame.func is None or frame.func.owner is None:
        raise Unknown("super() outside a method", scope.module.path, line_of(node))
    return SuperProxy(frame.func.owner, frame.first)


def call(
    interp: Interpreter,
    func: Value,
    args: list[Value],
    kwargs: dict[str, Value],
    node: ast.AST,
    path: str,
) -> Value:
    line = line_of(node)
    if isinstance(func, Bound):  # (a classmethod's is bound to its class: objects._bind)
        return invoke(interp, func.func, [func.target, *args], kwargs, node)
    if isinstance(func, PyFunction):
        if func.kind == "classmethod":
            raise Unknown("unbound classmethod call", path, line)
        return invoke(interp, func, args, kwargs, node)
    if isinstance(func, PyClass):
        return instantiate(interp, func, args, kwargs, node, path)
    if isinstance(func, External) or (
        isinstance(func, Builtin) and func.name not in abstract_str.KEPT_BY
    ):
        abstract_str.concretize(func, *args, *kwargs.values())  # (its tests: see .methods)
    if isinstance(func, Builtin):
        if func.name not in abstract.BUILTINS and any(
            isinstance(a, abstract.AbstractInt) for a in (*args, *kwargs.values())
        ):
            raise Unknown(f"a head size passed to {func.name}() is not evaluated", path, line)
        try:
            return func.fn(interp, args, kwargs, node, path)
        except (IndexError, KeyError, ValueError, TypeError, AttributeError, OverflowError):
            # arguments the implementation does not expect (``len()``, ``range()``)
            raise Unknown(
                f"{func.name}() with these arguments not evaluated", path, line
            ) from None
    if isinstance(func, External):
        result = interp.world.call_external(interp, func, args, kwargs)
        if result is MISSING:
            raise Unknown(f"call into {func.qualname} (outside the tree)", path, line)
        return result
    abstract_str.concretize(func)
    raise Unknown(f"call of {type(func).__name__} not evaluated", path, line)


def invoke(
    interp: Interpreter,
    func: PyFunction,
    args: list[Value],
    kwargs: dict[str, Value],
    node: ast.AST,
    watched: bool = True,
) -> Value:
    if watched and interp.call_watcher is not None:
        return interp.call_watcher(func, args, kwargs, node)
    if interp.gpu_observer is not None:  # (the selector's table: see GpuObserver)
        run = lambda: _invoke(interp, func, args, kwargs, node)  # noqa: E731
        return interp.gpu_observer.observe((func, args, kwargs), run)
    return _invoke(interp, func, args, kwargs, node)


def _invoke(
    interp: Interpreter,
    func: PyFunction,
    args: list[Value],
    kwargs: dict[str, Value],
    node: ast.AST,
) -> Value:
    if interp.called is not None:
        interp.called[id(func.node)] = func
    hooked = interp.world.function_hook(interp, func, args, kwargs)
    if hooked is not MISSING:
        return hooked
    if func.kind.startswith("opaque"):
        raise Unknown(
            f"{func.name} is wrapped by a decorator that is not evaluated",
            func.path,
            func.node.lineno,
        )
    if func.cached:
        _check_hashable([*args, *kwargs.values()])
    found = interp.call_memo.lookup(interp, func, args, kwargs)
    if found is not None:
        ok, value, read = found
        interp.read_gpu(read)
        if ok:
            return _fresh(interp, value)
        raise value
    budget = interp.budget
    if budget.depth >= budget.max_depth:
        raise LimitExceeded(
            "calls nested too deeply (recursion?)", func.path, func.node.lineno, kind="nesting"
        )
    saved_read = interp.capability_read
    interp.capability_read = 0
    budget.depth += 1
    looked_up = interp.call_memo.reads(func)
    writes = interp.class_writes  # a call that changed a class or shared value: not kept
    try:
        value = run_function(interp, func, args, kwargs, looked_up)
    except (Unknown, Raised) as exc:
        read = interp.capability_read
        interp.capability_read = saved_read | read
        if isinstance(exc, Unknown) and not args and not kwargs:
            exc.assumable = exc.assumable or func.name
            exc.outermost = func.name
        budget_hit = out_of_steps(exc)
        if not budget_hit and (interp.class_writes == writes or func.cached):
            interp.call_memo.store(interp, func, args, kwargs, looked_up, (False, exc, read))
        raise
    except RecursionError:
        interp.capability_read = saved_read
        raise LimitExceeded(
            "expression nested too deeply", func.path, func.node.lineno, kind="nesting"
        ) from None
    finally:
        budget.depth -= 1
    read = interp.capability_read
    interp.capability_read = saved_read | read
    if (interp.class_writes == writes or func.cached) and not isinstance(value, LazyGen):
        kept = _fresh(interp, value)
        interp.call_memo.store(interp, func, args, kwargs, looked_up, (True, kept, read))
    return value


def _check_hashable(values: list[Value]) -> None:
    """``functools.cache`` hashes every argument: a list, dict or set (in a tuple
    too) raises TypeError before the function runs."""
    todo = list(values)
    while todo:
        value = todo.pop()
        if type(value) in (list, dict, set):
            raise Raised("TypeError", f"unhashable type: {type(value).__name__!r}")
        if type(value) is tuple:
            todo.extend(value)


def run_function(
    interp: Interpreter,
    func: PyFunction,
    args: list[Value],
    kwargs: dict[str, Value],
    reads: dict[str, None] | None = None,
) -> Value:
    """``func`` called, not through the call memo (an answer that depends on
    something the memo does not key on); ``reads`` collects the names of the
    arguments the body read, in order."""
    node = func.node
    if func.wrappers:
        return _run_wrapped(interp, func, args, kwargs)
    frame = Frame(func.module, func.scope, func=func if func.owner else None, reads=reads)
    frame.bound = interp.call_memo.signature(func).locals
    bind_args(interp, func, node.args, args, kwargs, frame)
    if isinstance(node, ast.Lambda):
        return interp.eval(node.body, frame)
    if func.name in interp.lenient_functions:
        return interp.run_lenient(node.body, frame)
    return interp.run_body(node.body, frame)


def _fresh(interp: Interpreter, value: Value) -> Value:
    """A remembered answer as a new call gives it: a list, dict or set the call
    built is a new object each time (the caller may change it: ``.remove()``),
    one a module or class holds is that same object."""
    if type(value) in (list, dict, set) and (
        interp.shared_ids is None or id(value) not in interp.shared_ids
    ):
        return type(value)(value)
    return value


def _run_wrapped(
    interp: Interpreter, func: PyFunction, args: list[Value], kwargs: dict[str, Value]
) -> Value:
    """A function under decorators of the tree: each decorator is called on the
    plain function (innermost first), and what they return is called."""
    wrapped: Value = replace(func, kind="function", wrappers=(), defaults=func.defaults)
    for decorator in reversed(func.wrappers):
        wrapper = interp.eval(decorator, func.scope)
        wrapped = call(interp, wrapper, [wrapped], {}, decorator, func.path)
    return call(interp, wrapped, args, kwargs, func.node, func.path)


def _default(interp: Interpreter, func: PyFunction, node: ast.expr) -> Value:
    """A default is one object for every call (a list default keeps its appends),
    per GPU when evaluating it read the device capability."""
    key = f"{node.lineno}:{node.col_offset}"
    found = cached(func.defaults, key, interp)
    if isinstance(found, Unknown):
        raise found
    if found is not MISSING:
        return found
    return remember(func.defaults, key, interp, lambda: interp.eval(node, func.scope))


def defaults_now(interp: Interpreter, func: PyFunction) -> PyFunction:
    """A function defined in a function: its defaults evaluated now, as ``def``
    does (``lambda i=i: i`` in a loop keeps each ``i``). Module and class level
    ones are evaluated when first needed (their names are bound by then)."""
    if isinstance(func.scope, Frame):
        spec = func.node.args
        for node in [*spec.defaults, *(d for d in spec.kw_defaults if d is not None)]:
            try:
                _default(interp, func, node)
            except Unknown as exc:  # asked for only if a call needs it
                func.defaults[f"{node.lineno}:{node.col_offset}"] = exc
    return func


def bind_args(
    interp: Interpreter,
    func: PyFunction,
    spec: ast.arguments,
    args: list[Value],
    kwargs: dict[str, Value],
    frame: Frame,
) -> None:
    """Bind a call's arguments in ``frame``; ``spec`` is ``func.node.args`` (every
    caller's), whose names the call memo's signature of ``func`` keeps."""
    positional = [*spec.posonlyargs, *spec.args]
    defaults = spec.defaults
    n_required = len(positional) - len(defaults)
    local = frame.locals
    if len(args) > len(positional) and spec.vararg is None:
        raise Raised("TypeError", f"{func.name}() takes {len(positional)} positional arguments")
    sig = interp.call_memo.signature(func)  # (its names, as the call memo keeps them per node)
    names, named = sig.names, sig.named
    for name, value in zip(names, args, strict=False):
        local[name] = value
    if spec.vararg is not None:
        local[spec.vararg.arg] = tuple(args[len(positional) :])
    extra: dict[str, Value] = {}
    for key, value in kwargs.items():
        if key in named:
            if key in local:
                raise Raised("TypeError", f"multiple values for {key}")
            local[key] = value
        elif spec.kwarg is not None:
            extra[key] = value
        else:
            raise Raised("TypeError", f"{func.name}() got an unexpected keyword argument {key!r}")
    for i, name in enumerate(names):
        if name not in local:
            if i < n_required:
                raise Raised("TypeError", f"{func.name}() missing argument {name!r}")
            local[name] = _default(interp, func, defaults[i - n_required])
    for arg, default in zip(spec.kwonlyargs, spec.kw_defaults, strict=True):
        if arg.arg not in local:
            if default is None:
                raise Raised("TypeError", f"{func.name}() missing argument {arg.arg!r}")
            local[arg.arg] = _default(interp, func, default)
    if spec.kwarg is not None:
        local[spec.kwarg.arg] = extra
    if positional and args:
        frame.first = args[0]


def builtins_value(interp: Interpreter, name: str) -> Value:
    if name in BUILTINS:
        return BUILTINS[name]
    if name in PLAIN_TYPES or name in ("super", "object", "type"):
        return BUILTINS.get(name, External(f"builtins.{name}"))
    if name.endswith(("Error", "Exception")) or name in ("NotImplemented", "Ellipsis"):
        return External(f"builtins.{name}")
    return MISSING


def primitive_method(
    interp: Interpreter, obj: Value, name: str, node: ast.AST, path: str
) -> Value:
    return method_of(obj, name)
