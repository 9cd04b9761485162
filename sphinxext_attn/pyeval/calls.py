"""Calls: functions and methods of the tree, class instantiation, builtins.

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

from sphinxext_attn.pyeval import abstract, ops
from sphinxext_attn.pyeval.fields import Fields, dataclass_eq, is_dataclass, record_fields
from sphinxext_attn.pyeval.members import PLAIN_TYPES, class_mro
from sphinxext_attn.pyeval.scope import MISSING, Frame, Scope, cached, remember
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
    SuperProxy,
    Unknown,
    Value,
    out_of_steps,
)

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter


class CallMixin:
    """Calling values, for :class:`Interpreter`."""

    def _call(self: Interpreter, node: ast.Call, scope: Scope) -> Value:
        func = self.eval(node.func, scope)
        args: list[Value] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                args.extend(self.iterate(self.eval(arg.value, scope), arg, scope.module.path))
            else:
                args.append(self.eval(arg, scope))
        kwargs: dict[str, Value] = {}
        for kw in node.keywords:
            value = self.eval(kw.value, scope)
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
            return self._super(scope, node)
        return self.call(func, args, kwargs, node, scope.module.path)

    def _super(self: Interpreter, scope: Scope, node: ast.AST) -> SuperProxy:
        frame: Scope | None = scope
        while isinstance(frame, Frame) and frame.func is None:
            frame = frame.parent
        if not isinstance(frame, Frame) or frame.func is None or frame.func.owner is None:
            raise Unknown(
                "super() outside a method", scope.module.path, getattr(node, "lineno", 0)
            )
        return SuperProxy(frame.func.owner, frame.first)

    def call(
        self: Interpreter,
        func: Value,
        args: list[Value],
        kwargs: dict[str, Value],
        node: ast.AST,
        path: str,
    ) -> Value:
        line = getattr(node, "lineno", 0)
        if isinstance(func, Bound):
            target = func.target
            if func.func.kind == "classmethod" and isinstance(target, Instance | EnumMember):
                target = target.cls
            return self.invoke(func.func, [target, *args], kwargs, node)
        if isinstance(func, PyFunction):
            if func.kind == "classmethod":
                raise Unknown("unbound classmethod call", path, line)
            return self.invoke(func, args, kwargs, node)
        if isinstance(func, PyClass):
            return self.instantiate(func, args, kwargs, node, path)
        if isinstance(func, Builtin):
            if func.name not in abstract.BUILTINS and any(
                isinstance(a, abstract.AbstractInt) for a in (*args, *kwargs.values())
            ):
                raise Unknown(f"a head size passed to {func.name}() is not evaluated", path, line)
            try:
                return func.fn(self, args, kwargs, node, path)
            except (IndexError, KeyError, ValueError, TypeError, AttributeError, OverflowError):
                # arguments the implementation does not expect (``len()``, ``range()``)
                raise Unknown(
                    f"{func.name}() with these arguments not evaluated", path, line
                ) from None
        if isinstance(func, External):
            result = self.world.call_external(self, func, args, kwargs)
            if result is MISSING:
                raise Unknown(f"call into {func.qualname} (outside the tree)", path, line)
            return result
        raise Unknown(f"call of {type(func).__name__} not evaluated", path, line)

    def invoke(
        self: Interpreter,
        func: PyFunction,
        args: list[Value],
        kwargs: dict[str, Value],
        node: ast.AST,
        watched: bool = True,
    ) -> Value:
        if watched and self.call_watcher is not None:
            return self.call_watcher(func, args, kwargs, node)
        if self.gpu_observer is not None:  # (the selector's table: see GpuObserver)
            run = lambda: self._invoke(func, args, kwargs, node)  # noqa: E731
            return self.gpu_observer.observe((func, args, kwargs), run)
        return self._invoke(func, args, kwargs, node)

    def _invoke(
        self: Interpreter,
        func: PyFunction,
        args: list[Value],
        kwargs: dict[str, Value],
        node: ast.AST,
    ) -> Value:
        if self.called is not None:
            self.called[id(func.node)] = func
        hooked = self.world.function_hook(self, func, args, kwargs)
        if hooked is not MISSING:
            return hooked
        if func.kind.startswith("opaque"):
            raise Unknown(
                f"{func.name} is wrapped by a decorator that is not evaluated",
                func.path,
                func.node.lineno,
            )
        found = self.call_memo.lookup(self, func, args, kwargs)
        if found is not None:
            ok, value, read = found
            self.read_gpu(read)
            if ok:
                return self._fresh(value)
            raise value
        budget = self.budget
        if budget.depth >= budget.max_depth:
            raise LimitExceeded(
                "calls nested too deeply (recursion?)", func.path, func.node.lineno, kind="nesting"
            )
        saved_read = self.capability_read
        self.capability_read = 0
        budget.depth += 1
        looked_up = self.call_memo.reads(func)
        writes = self.class_writes  # a call that changed a class or shared value: not kept
        try:
            value = self.run_function(func, args, kwargs, looked_up)
        except (Unknown, Raised) as exc:
            read = self.capability_read
            self.capability_read = saved_read | read
            if isinstance(exc, Unknown) and not args and not kwargs:
                exc.assumable = exc.assumable or func.name
                exc.outermost = func.name
            budget_hit = out_of_steps(exc)
            if not budget_hit and (self.class_writes == writes or func.cached):
                self.call_memo.store(self, func, args, kwargs, looked_up, (False, exc, read))
            raise
        except RecursionError:
            self.capability_read = saved_read
            raise LimitExceeded(
                "expression nested too deeply", func.path, func.node.lineno, kind="nesting"
            ) from None
        finally:
            budget.depth -= 1
        read = self.capability_read
        self.capability_read = saved_read | read
        if (self.class_writes == writes or func.cached) and not isinstance(value, LazyGen):
            kept = self._fresh(value)
            self.call_memo.store(self, func, args, kwargs, looked_up, (True, kept, read))
        return value

    def run_function(
        self: Interpreter,
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
            return self._run_wrapped(func, args, kwargs)
        frame = Frame(func.module, func.scope, func=func if func.owner else None, reads=reads)
        self.bind_args(func, node.args, args, kwargs, frame)
        if isinstance(node, ast.Lambda):
            return self.eval(node.body, frame)
        if func.name in self.lenient_functions:
            return self.run_lenient(node.body, frame)
        return self.run_body(node.body, frame)

    def _fresh(self: Interpreter, value: Value) -> Value:
        """A remembered answer as a new call gives it: a list, dict or set the call
        built is a new object each time (the caller may change it: ``.remove()``),
        one a module or class holds is that same object."""
        if type(value) in (list, dict, set) and (
            self.shared_ids is None or id(value) not in self.shared_ids
        ):
            return type(value)(value)
        return value

    def _run_wrapped(
        self: Interpreter, func: PyFunction, args: list[Value], kwargs: dict[str, Value]
    ) -> Value:
        """A function under decorators of the tree: each decorator is called on the
        plain function (innermost first), and what they return is called."""
        wrapped: Value = replace(func, kind="function", wrappers=(), defaults=func.defaults)
        for decorator in reversed(func.wrappers):
            wrapper = self.eval(decorator, func.scope)
            wrapped = self.call(wrapper, [wrapped], {}, decorator, func.path)
        return self.call(wrapped, args, kwargs, func.node, func.path)

    def _default(self: Interpreter, func: PyFunction, node: ast.expr) -> Value:
        """A default is one object for every call (a list default keeps its appends),
        per GPU when evaluating it read the device capability."""
        key = f"{node.lineno}:{node.col_offset}"
        found = cached(func.defaults, key, self)
        if isinstance(found, Unknown):
            raise found
        if found is not MISSING:
            return found
        return remember(func.defaults, key, self, lambda: self.eval(node, func.scope))

    def defaults_now(self: Interpreter, func: PyFunction) -> PyFunction:
        """A function defined in a function: its defaults evaluated now, as ``def``
        does (``lambda i=i: i`` in a loop keeps each ``i``). Module and class level
        ones are evaluated when first needed (their names are bound by then)."""
        if isinstance(func.scope, Frame):
            spec = func.node.args
            for node in [*spec.defaults, *(d for d in spec.kw_defaults if d is not None)]:
                try:
                    self._default(func, node)
                except Unknown as exc:  # asked for only if a call needs it
                    func.defaults[f"{node.lineno}:{node.col_offset}"] = exc
        return func

    def bind_args(
        self: Interpreter,
        func: PyFunction,
        spec: ast.arguments,
        args: list[Value],
        kwargs: dict[str, Value],
        frame: Frame,
    ) -> None:
        positional = [*spec.posonlyargs, *spec.args]
        names = [a.arg for a in positional]
        defaults = spec.defaults
        n_required = len(positional) - len(defaults)
        local = frame.locals
        if len(args) > len(positional) and spec.vararg is None:
            raise Raised(
                "TypeError", f"{func.name}() takes {len(positional)} positional arguments"
            )
        for name, value in zip(names, args, strict=False):
            local[name] = value
        if spec.vararg is not None:
            local[spec.vararg.arg] = tuple(args[len(positional) :])
        extra: dict[str, Value] = {}
        for key, value in kwargs.items():
            if key in names[len(spec.posonlyargs) :] or any(a.arg == key for a in spec.kwonlyargs):
                if key in local:
                    raise Raised("TypeError", f"multiple values for {key}")
                local[key] = value
            elif spec.kwarg is not None:
                extra[key] = value
            else:
                raise Raised(
                    "TypeError", f"{func.name}() got an unexpected keyword argument {key!r}"
                )
        for i, name in enumerate(names):
            if name not in local:
                if i < n_required:
                    raise Raised("TypeError", f"{func.name}() missing argument {name!r}")
                local[name] = self._default(func, defaults[i - n_required])
        for arg, default in zip(spec.kwonlyargs, spec.kw_defaults, strict=True):
            if arg.arg not in local:
                if default is None:
                    raise Raised("TypeError", f"{func.name}() missing argument {arg.arg!r}")
                local[arg.arg] = self._default(func, default)
        if spec.kwarg is not None:
            local[spec.kwarg.arg] = extra
        if positional and args:
            frame.first = args[0]

    def instantiate(
        self: Interpreter,
        cls: PyClass,
        args: list[Value],
        kwargs: dict[str, Value],
        node: ast.AST,
        path: str,
    ) -> Value:
        if self.is_enum(cls):
            where = (path, getattr(node, "lineno", 0))
            if args and isinstance(args[0], EnumMember) and args[0].cls is cls:
                return args[0]  # ``E(E.A)`` is ``E.A``
            for member in self.iterate(cls, node, path):
                if args and ops.equal(member.value, args[0], self.budget, where):
                    return member
            value = ops.text(args[0] if args else None, self.budget, where)
            raise Raised("ValueError", f"{value} is not a valid {cls.name}")
        fields = self.dataclass_fields(cls)
        if (
            fields is not None
            and is_dataclass(cls)
            and self.class_own_attr(cls, "__init__") is not MISSING
        ):
            fields = None  # a dataclass keeps the ``__init__`` its body writes
        if fields is None:
            if any(
                isinstance(c, External)
                and c.qualname.startswith("builtins.")
                and c.qualname.endswith(("Error", "Exception"))
                for c in class_mro(cls, self)
            ):
                return External(f"builtins.{cls.name}")
            return self._construct(cls, args, kwargs, node, path)
        if len(args) > len(fields):
            raise Raised("TypeError", f"{cls.name}() takes {len(fields)} positional arguments")
        values: dict[str, Value] = {}
        for (name, _default), value in zip(fields, args, strict=False):
            values[name] = value
        for name, value in kwargs.items():
            if name not in dict(fields):
                raise Raised(
                    "TypeError", f"{cls.name}() got an unexpected keyword argument {name!r}"
                )
            values[name] = value
        for name, default in fields:
            if name not in values:
                if default is None:
                    raise Raised("TypeError", f"{cls.name}() missing argument {name!r}")
                values[name] = self.eval(default, self.class_body_scope(cls))
        ordered = {name: values[name] for name, _ in fields}
        items = tuple(ordered.values()) if self.is_namedtuple(cls) else None
        made = Instance(cls, ordered, items, by_fields=items is None and dataclass_eq(cls))
        if items is None and self.defines(cls, "__post_init__"):
            # a dataclass's __init__ ends by calling it
            self.call(self.getattr(made, "__post_init__", node, path), [], {}, node, path)
        return made

    def _construct(
        self: Interpreter,
        cls: PyClass,
        args: list[Value],
        kwargs: dict[str, Value],
        node: ast.AST,
        path: str,
    ) -> Value:
        """A plain class of the tree: an instance, then its ``__init__`` if it has one.
        Classes deriving from something outside the tree (``torch.nn.Module``) are unknown."""
        line = getattr(node, "lineno", 0)
        plain = {"abc.ABC", "typing.Generic", "builtins.object", "typing.Protocol"}
        for klass in class_mro(cls, self)[1:]:
            if isinstance(klass, External) and klass.qualname not in plain:
                raise Unknown(f"creating a {cls.name} instance not evaluated", path, line)
        inst = Instance(cls)
        init, _ = self.class_attr(cls, "__init__")
        if isinstance(init, PyFunction):
            self.invoke(init, [inst, *args], kwargs, node)
        elif args or kwargs:
            raise Raised("TypeError", f"{cls.name}() takes no arguments")
        return inst

    def dataclass_fields(self: Interpreter, cls: PyClass) -> Fields | None:
        """Fields of a named tuple or dataclass (annotated class-level names), else None."""
        return record_fields(self, cls)

    def builtins_value(self: Interpreter, name: str) -> Value:
        from sphinxext_attn.pyeval.builtins import BUILTINS

        if name in BUILTINS:
            return BUILTINS[name]
        if name in PLAIN_TYPES or name in ("super", "object", "type"):
            return BUILTINS.get(name, External(f"builtins.{name}"))
        if name.endswith(("Error", "Exception")) or name in ("NotImplemented", "Ellipsis"):
            return External(f"builtins.{name}")
        return MISSING

    def primitive_method(
        self: Interpreter, obj: Value, name: str, node: ast.AST, path: str
    ) -> Value:
        from sphinxext_attn.pyeval.methods import method_of

        return method_of(obj, name)
