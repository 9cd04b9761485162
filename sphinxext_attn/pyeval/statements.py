"""Statements of the evaluated subset, for :class:`~.interp.Interpreter`.

Function bodies run here: ``return``, ``if``, assignments (names, tuples,
attributes, items), ``for`` over known finite values, ``try``/``except``,
``raise``, ``assert``, nested ``def`` and ``class``, imports. Value other
statement (``while``, ``global``, ``del`` ...) is :class:`Unknown`, never skipped.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval import ops
from sphinxext_attn.pyeval.bindings import bound_names
from sphinxext_attn.pyeval.checks import SkippedChecks, run_checks
from sphinxext_attn.pyeval.exceptions import exception_name, raised
from sphinxext_attn.pyeval.scope import DELETED, Frame
from sphinxext_attn.pyeval.values import Caught, Raised, Return, Unknown, Value, out_of_steps

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter

#: Logging calls change no answer; their statements are skipped unevaluated.
LOG_METHODS = frozenset(
    {
        "debug",
        "info",
        "warning",
        "warn",
        "error",
        "exception",
        "critical",
        "log",
        "debug_once",
        "info_once",
        "warning_once",
    }
)


#: Prefix of the reason given for a check that could not be evaluated.
NOT_EVALUATED = "not evaluated: "


class NotEvaluated(str):
    """The reason standing for a check that could not be evaluated. It is a string,
    so the analysed code handles it as any reason, and it carries the
    :class:`Unknown` itself (its place and the assumable fact that settles it)."""

    unknown: Unknown

    def __new__(cls, unknown: Unknown) -> NotEvaluated:
        made = super().__new__(cls, f"{NOT_EVALUATED}{unknown}")
        made.unknown = unknown
        return made


class _Return(Exception):
    def __init__(self, value: Value) -> None:
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


def run_body(interp: Interpreter, body: list[ast.stmt], frame: Frame) -> Value:
    """Run a function body; the returned value (``None`` when it falls off the end)."""
    try:
        exec_block(interp, body, frame)
    except _Return as ret:
        return ret.value
    except (_Break, _Continue):
        raise Unknown("break outside a loop", frame.module.path) from None
    return None


def run_lenient(interp: Interpreter, body: list[ast.stmt], frame: Frame) -> Value:
    """Run a list-of-reasons function (``validate_configuration``) so that a
    check that cannot be evaluated does not hide the others: its statement is
    skipped and recorded, and a ``not evaluated: ...`` reason takes its place
    in the list, so no reason vLLM gives goes missing unseen and a result
    with a skipped check is never counted as valid."""
    skipped = SkippedChecks()
    value: Value = None
    try:
        run_checks(interp.statement_memo, interp, body, frame, skipped)
    except _Return as ret:
        value = ret.value
    if skipped.unknowns and isinstance(value, list):
        reasons, value = value, list(value)
        for shift, (at, exc) in enumerate(skipped.gaps(reasons)):
            value.insert(at + shift, NotEvaluated(exc))
        interp.skipped_checks.extend(skipped.unknowns)
    return value


def exec_block(interp: Interpreter, body: list[ast.stmt], frame: Frame) -> None:
    for stmt in body:
        exec_stmt(interp, stmt, frame)


def exec_stmt(interp: Interpreter, stmt: ast.stmt, frame: Frame) -> None:
    path = frame.module.path
    budget = interp.budget
    budget.steps -= 1
    if budget.steps < 0:
        budget.fail(stmt, path)
    if isinstance(stmt, ast.Return):
        value = None if stmt.value is None else interp.eval(stmt.value, frame)
        if interp.returns is not None:
            interp.returns.append(Return(path, stmt.lineno, value, stmt.value))
        raise _Return(value)
    if isinstance(stmt, ast.If):
        test = interp.truth(interp.eval(stmt.test, frame), stmt.test, path)
        exec_block(interp, stmt.body if test else stmt.orelse, frame)
    elif isinstance(stmt, ast.Expr):
        if not _is_log_call(stmt.value) and not isinstance(stmt.value, ast.Constant):
            interp.eval(stmt.value, frame)
    elif isinstance(stmt, ast.Assign):
        value = interp.eval(stmt.value, frame)
        for target in stmt.targets:
            assign(interp, target, value, frame)
    elif isinstance(stmt, ast.AnnAssign):
        if stmt.value is not None:
            assign(interp, stmt.target, interp.eval(stmt.value, frame), frame)
    elif isinstance(stmt, ast.AugAssign):
        current = interp.eval(_as_load(stmt.target), frame)
        value = interp.eval(stmt.value, frame)
        where = (path, stmt.lineno)
        if isinstance(current, list) and isinstance(stmt.op, ast.Add):
            added = interp.iterate(value, stmt, path)
            interp.mutated(current, added)
            current.extend(added)
            ops.check_size(current, where)
            value = current
        else:
            value = ops.binop(stmt.op, current, value, where, interp.budget)
            if isinstance(stmt.op, IN_PLACE.get(type(current), ())):
                # ``a *= 2``, ``s |= t``, ``d |= e`` change the object (and its aliases)
                interp.mutated(current, [value])
                if isinstance(current, list):
                    current[:] = value
                else:
                    current.clear()
                    current.update(value)
                value = current
        assign(interp, stmt.target, value, frame)
    elif isinstance(stmt, ast.For):
        _for(interp, stmt, frame)
    elif isinstance(stmt, ast.Try):
        _try(interp, stmt, frame)
    elif isinstance(stmt, ast.Raise):
        _raise(interp, stmt, frame)
    elif isinstance(stmt, ast.Assert):
        if not interp.truth(interp.eval(stmt.test, frame), stmt.test, path):
            _run_parts(interp, [stmt.msg] if stmt.msg is not None else [], frame)
            raise Raised("AssertionError")
    elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
        frame.locals[stmt.name] = interp.make_function(stmt, frame, owner=None)
    elif isinstance(stmt, ast.ClassDef):
        frame.locals[stmt.name] = interp.make_class(stmt, frame)
    elif isinstance(stmt, ast.Import | ast.ImportFrom):
        for name in bound_names(stmt):
            frame.locals[name] = interp.import_binding(stmt, name, frame.module)
    elif isinstance(stmt, ast.With):
        exec_block(interp, stmt.body, frame)
    elif isinstance(stmt, ast.Delete) and _deleted_locals(stmt, frame):
        for name in _deleted_locals(stmt, frame):
            frame.locals[name] = DELETED
    elif isinstance(stmt, ast.Global):
        frame.global_names |= frozenset(stmt.names)
    elif isinstance(stmt, ast.Break):
        raise _Break
    elif isinstance(stmt, ast.Continue):
        raise _Continue
    elif not isinstance(stmt, ast.Pass):
        raise Unknown(f"{type(stmt).__name__} statement not evaluated", path, stmt.lineno)


def _for(interp: Interpreter, stmt: ast.For, frame: Frame) -> None:
    items = interp.iterate(interp.eval(stmt.iter, frame), stmt.iter, frame.module.path)
    for item in items:
        assign(interp, stmt.target, item, frame)
        try:
            exec_block(interp, stmt.body, frame)
        except _Break:
            return
        except _Continue:
            continue
    exec_block(interp, stmt.orelse, frame)


def _try(interp: Interpreter, stmt: ast.Try, frame: Frame) -> None:
    try:
        exec_block(interp, stmt.body, frame)
    except Raised as exc:
        for handler in stmt.handlers:
            if _handles(interp, handler, exc, frame):
                if handler.name:
                    known = exc.message if exc.exact else None
                    frame.locals[handler.name] = Caught(exc.kind, known)
                try:
                    exec_block(interp, handler.body, frame)
                finally:
                    if handler.name:  # Python unbinds it when the handler ends
                        frame.locals.pop(handler.name, None)
                break
        else:
            raise
    else:
        exec_block(interp, stmt.orelse, frame)
    finally:
        if stmt.finalbody:
            exec_block(interp, stmt.finalbody, frame)


def _handles(interp: Interpreter, handler: ast.ExceptHandler, exc: Raised, frame: Frame) -> bool:
    if handler.type is None:
        return True
    kinds = interp.eval(handler.type, frame)
    for kind in kinds if isinstance(kinds, tuple) else (kinds,):
        name = exception_name(kind)
        if name is None:
            raise Unknown("except clause not understood", frame.module.path, handler.lineno)
        if exc.matches(name):
            return True
    return False


def _run_parts(interp: Interpreter, parts: list[ast.expr], frame: Frame) -> None:
    """The other arguments of a ``raise`` or ``assert``: they run first, and an
    exception they raise wins; one not evaluated leaves the statement's own."""
    for part in parts:
        try:
            interp.eval(part.value if isinstance(part, ast.Starred) else part, frame)
        except Unknown as unknown:
            if out_of_steps(unknown):
                raise


def _raise(interp: Interpreter, stmt: ast.Raise, frame: Frame) -> None:
    path = frame.module.path
    if stmt.exc is None:
        raise Unknown("bare raise not evaluated", path, stmt.lineno)
    exc = stmt.exc
    kind = interp.eval(exc.func if isinstance(exc, ast.Call) else exc, frame)
    parts = [*exc.args[1:], *(k.value for k in exc.keywords)] if isinstance(exc, ast.Call) else []
    _run_parts(interp, [*parts, *([stmt.cause] if stmt.cause is not None else [])], frame)
    message = ""
    if isinstance(exc, ast.Call) and exc.args and not isinstance(exc.args[0], ast.Starred):
        try:
            where = (path, stmt.lineno)
            message = ops.text(interp.eval(exc.args[0], frame), interp.budget, where)
        except Unknown as unknown:
            if out_of_steps(unknown):
                raise
    raise raised(interp, kind, message, (path, stmt.lineno))


def assign(interp: Interpreter, target: ast.expr, value: Value, frame: Frame) -> None:
    if isinstance(target, ast.Name):
        if target.id in frame.global_names:
            interp.rebind_global(frame.module, target.id, value)
        else:
            frame.locals[target.id] = value
    elif isinstance(target, ast.Tuple | ast.List):
        items = interp.iterate(value, target, frame.module.path)
        if len(items) != len(target.elts) or any(isinstance(e, ast.Starred) for e in target.elts):
            raise Unknown("unpacking not evaluated", frame.module.path, target.lineno)
        for elt, item in zip(target.elts, items, strict=True):
            assign(interp, elt, item, frame)
    elif isinstance(target, ast.Attribute):
        interp.setattr(
            interp.eval(target.value, frame), target.attr, value, target, frame.module.path
        )
    elif isinstance(target, ast.Subscript):
        container = interp.eval(target.value, frame)
        key = interp.eval(target.slice, frame)
        interp.set_item(container, key, value, target, frame.module.path)
    else:
        raise Unknown("assignment target not evaluated", frame.module.path, target.lineno)


#: Augmented assignments that change a list, set or dict in place.
IN_PLACE: dict[type, tuple[type, ...]] = {
    list: (ast.Mult,),
    set: (ast.BitOr, ast.Sub, ast.BitAnd, ast.BitXor),
    dict: (ast.BitOr,),
}


#: Names a logger goes by (``logger = init_logger(__name__)`` in vLLM).
LOGGER_NAMES = frozenset({"logger", "_logger", "LOGGER", "log", "logging"})


def _is_log_call(expr: ast.expr) -> bool:
    """``logger.warning(...)``: a statement that only logs (not run). A method of
    that name on anything else (``Registry.info(x)``, ``math.log(-1)``) runs."""
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)):
        return False
    owner = expr.func.value
    name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
    return name in LOGGER_NAMES and expr.func.attr in LOG_METHODS


def _as_load(target: ast.expr) -> ast.expr:
    clone = ast.copy_location(
        type(target)(**{f: getattr(target, f) for f in target._fields}), target
    )
    clone.ctx = ast.Load()  # type: ignore[attr-defined,unused-ignore]
    return clone


def _deleted_locals(stmt: ast.Delete, frame: Frame) -> list[str]:
    """The names ``del a, b`` (or ``del (a, b)``) unbinds, where each is bound in this
    call (a function's own locals: unbinding them changes nothing outside it);
    none where it deletes anything else (that is not evaluated)."""
    names: list[str] = []
    todo = list(stmt.targets)
    while todo:
        target = todo.pop(0)
        if isinstance(target, ast.Tuple | ast.List):
            todo[:0] = target.elts
        elif (
            isinstance(target, ast.Name)
            and target.id in frame.locals
            and target.id not in frame.global_names
        ):
            names.append(target.id)
        else:
            return []
    return names
