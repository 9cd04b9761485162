"""Run the statements of a model's or an implementation's ``__init__`` up to a
point, the way a constructor runs them, skipping what the evaluator cannot
follow (torch, distributed state) instead of giving up on the whole body.

A skipped ``if`` skips both branches (never a guessed branch); a ``raise``
reached is the constructor's refusal (:class:`Refused`), with vLLM's message
where its parts evaluate (parts that do not are shown as their source).
"""

from __future__ import annotations

import ast
import contextlib
from dataclasses import dataclass, field
from typing import Any

from sphinxext_attn.model.records import Location
from sphinxext_attn.pyeval import (
    Frame,
    Interpreter,
    ModuleScope,
    PyClass,
    PyFunction,
    Raised,
    Unknown,
)

#: parents' constructors followed through ``super().__init__``
MAX_SUPER_DEPTH = 4


class Refused(Exception):
    """A ``raise`` of the body was reached."""

    def __init__(self, kind: str, message: str, where: Location) -> None:
        super().__init__(kind, message)
        self.kind, self.message, self.where = kind, message, where


@dataclass
class Run:
    """What a lenient run left out (each with its reason); ``owner``: the class
    whose ``__init__`` runs (its ``super().__init__(...)`` is followed)."""

    skipped: list[str] = field(default_factory=list)
    #: conditions of a ``raise`` that were not evaluated: the refusal is open
    open_checks: list[str] = field(default_factory=list)
    owner: PyClass | None = None
    depth: int = 0


def new_frame(module: ModuleScope, values: dict[str, Any]) -> Frame:
    return Frame(module, module, locals=dict(values))


def run_until(
    interp: Interpreter,
    body: list[ast.stmt],
    frame: Frame,
    stop: ast.AST | None,
    run: Run,
) -> bool:
    """Run ``body`` until the statement holding ``stop`` (True: reached it)."""
    path = frame.module.path
    for stmt in body:
        holds = stop is not None and any(n is stop for n in ast.walk(stmt))
        if isinstance(stmt, ast.If):
            try:
                taken = interp.truth(interp.eval(stmt.test, frame), stmt, path)
            except (Unknown, Raised) as exc:
                note = f"{path}:{stmt.lineno}: condition not evaluated ({exc})"
                run.skipped.append(note)
                if any(isinstance(n, ast.Raise) for n in ast.walk(stmt)):
                    run.open_checks.append(note)
                if holds:
                    return False
                continue
            if run_until(interp, stmt.body if taken else stmt.orelse, frame, stop, run):
                return True
            if holds:
                return False
            continue
        if holds:
            return True
        if isinstance(stmt, ast.Return):
            return False
        if isinstance(stmt, ast.Raise):
            if _abstract(body):
                return False  # ``raise NotImplementedError`` as a whole body: an abstract base
            raise Refused(*_raised(interp, stmt, frame), Location(path, stmt.lineno))
        super_call = _super_init(stmt)
        if super_call is not None and run.owner is not None and run.depth < MAX_SUPER_DEPTH:
            _follow_super(interp, super_call, frame, run)
            continue
        try:
            interp.exec_stmt(stmt, frame)
        except (Unknown, Raised) as exc:
            run.skipped.append(f"{path}:{stmt.lineno}: not evaluated ({exc})")
    return False


def _abstract(body: list[ast.stmt]) -> bool:
    real = [s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return len(real) == 1 and isinstance(real[0], ast.Raise)


def _super_init(stmt: ast.stmt) -> ast.Call | None:
    """``super().__init__(...)`` as a statement."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "__init__"
            and isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name)
            and func.value.func.id == "super"
        ):
            return stmt.value
    return None


def _follow_super(interp: Interpreter, call: ast.Call, frame: Frame, run: Run) -> None:
    """The parent's ``__init__``, run leniently with the arguments that evaluate."""
    assert run.owner is not None
    path = frame.module.path
    try:
        init, owner = interp.class_attr(run.owner, "__init__", after=run.owner)
    except (Unknown, Raised) as exc:
        run.skipped.append(f"{path}:{call.lineno}: super().__init__ not found ({exc})")
        return
    if not isinstance(init, PyFunction) or isinstance(init.node, ast.Lambda):
        run.skipped.append(f"{path}:{call.lineno}: super().__init__ is outside the tree")
        return
    params = [a.arg for a in (*init.node.args.posonlyargs, *init.node.args.args)][1:]
    values: dict[str, Any] = {"self": frame.locals.get("self")}
    for name, node in zip(params, call.args, strict=False):
        if isinstance(node, ast.Starred):
            break
        _bind(interp, values, name, node, frame)
    for keyword in call.keywords:
        if keyword.arg is not None:
            _bind(interp, values, keyword.arg, keyword.value, frame)
    inner = Run(
        run.skipped, run.open_checks, owner if isinstance(owner, PyClass) else None, run.depth + 1
    )
    run_until(interp, init.node.body, new_frame(init.module, values), None, inner)


def _bind(
    interp: Interpreter, values: dict[str, Any], name: str, node: ast.expr, frame: Frame
) -> None:
    with contextlib.suppress(Unknown, Raised):
        values[name] = interp.eval(node, frame)


def _raised(interp: Interpreter, stmt: ast.Raise, frame: Frame) -> tuple[str, str]:
    exc = stmt.exc
    call = exc if isinstance(exc, ast.Call) else None
    kind_node = call.func if call is not None else exc
    kind = ast.unparse(kind_node) if kind_node is not None else "Exception"
    message = ""
    if call is not None and call.args:
        message = _text(interp, call.args[0], frame)
    return kind, message


def _text(interp: Interpreter, node: ast.expr, frame: Frame) -> str:
    """The message: evaluated, or piece by piece with unknown parts as their source."""
    try:
        value = interp.eval(node, frame)
        if isinstance(value, str):
            return value
    except (Unknown, Raised):
        pass
    if isinstance(node, ast.JoinedStr):
        parts: list[str] = []
        for piece in node.values:
            if isinstance(piece, ast.Constant):
                parts.append(str(piece.value))
            elif isinstance(piece, ast.FormattedValue):
                try:
                    value = interp.eval(piece.value, frame)
                    parts.append(value if isinstance(value, str) else str(value))
                except (Unknown, Raised):
                    parts.append("{" + ast.unparse(piece.value) + "}")
        return "".join(parts)
    if isinstance(node, ast.Constant):
        return str(node.value)
    return ast.unparse(node)
