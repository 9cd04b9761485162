"""The line that decides an evaluated cell: the ``return`` its question ends on.

Each column's question is asked once more for one telling input (the first
accepted value, else the first tried), with the memo set aside so the run
really executes. The cell's source is the ``return`` that states the answer
(``return True``), else the class attribute the answer tests
(``cls.supported_dtypes``, where the nearest class assigns it), else the last
helper ``return`` that gave a list of values (``get_supported_head_sizes``),
else the outermost ``return`` (a comparison): in the class itself or in a
base in another file. A question whose run cannot be repeated falls back to
the method's ``def``.
"""

from __future__ import annotations

import ast
from typing import Any

from sphinxext_attn.knowledge.machine import capability_class
from sphinxext_attn.model.columns import ASKED
from sphinxext_attn.model.records import Location
from sphinxext_attn.pyeval import (
    NODE,
    STEPS_PER_CELL,
    Bound,
    External,
    Interpreter,
    PyClass,
    PyFunction,
    Raised,
    Return,
    Unknown,
    class_mro,
)
from sphinxext_attn.runtime.cell_text import first_head_size
from sphinxext_attn.runtime.class_answers import ClassAnswers
from sphinxext_attn.runtime.questions import attention_types
from sphinxext_attn.vocab.names import CAPABILITIES, DTYPES, HEAD_SIZES


def _argument(interp: Interpreter, cls: PyClass, column: str, facts: ClassAnswers) -> list[Any]:
    answer = facts.cells.get(column)
    if column == "Dtypes":
        labels = dict(DTYPES)
        first = answer[0] if answer else DTYPES[0][0]
        return [External(labels.get(first, DTYPES[0][1]))]
    if column == "KV Dtypes":
        return [answer[0] if answer else "auto"]
    if column == "Head Sizes":
        return [first_head_size(answer) or HEAD_SIZES[0]]
    if column == "Compute Cap.":
        cap = answer[0] if answer else CAPABILITIES[0]
        return [interp.call(capability_class(interp), list(cap), {}, NODE, cls.path)]
    if column == "Attention Types":
        chosen = [v for n, v in attention_types(interp, cls) if not answer or n in answer]
        return [chosen[0]] if chosen else []
    return []


def _definition(interp: Interpreter, cls: PyClass, method: str) -> Location | None:
    try:
        value = interp.getattr(cls, method, NODE, cls.path)
    except (Unknown, Raised):
        return None
    func = value.func if isinstance(value, Bound) else value
    if isinstance(func, PyFunction):
        return Location(func.path, func.node.lineno)
    return None


def _capability_for(column: str, facts: ClassAnswers) -> tuple[int, int] | None:
    caps = facts.cells.get(column)
    if column == "Compute Cap." and caps:
        return tuple(caps[0])
    return None


def _class_data(interp: Interpreter, cls: PyClass, expr: ast.expr | None) -> Location | None:
    """Where the nearest class in the resolution order assigns a ``cls.<name>``
    the expression reads (``dtype in cls.supported_dtypes``)."""
    if expr is None:
        return None
    names = [
        n.attr
        for n in ast.walk(expr)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "cls"
    ]
    if not names:
        return None
    try:
        with interp.guarded():
            mro = [k for k in class_mro(cls, interp) if isinstance(k, PyClass)]
    except (Unknown, Raised):
        return None
    for name in names:
        for klass in mro:
            for stmt in getattr(klass.node, "body", []):
                targets = (
                    stmt.targets
                    if isinstance(stmt, ast.Assign)
                    else [stmt.target]
                    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None
                    else []
                )
                if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                    return Location(klass.path, stmt.lineno)
    return None


def _decider(interp: Interpreter, cls: PyClass, returns: list[Return]) -> Location | None:
    """The outermost ``return`` when it states the answer (``return True``);
    otherwise the class attribute it tests (``cls.supported_dtypes``, where the
    nearest class assigns it), the last list of values a helper returned (the
    data the answer tests), else the outermost ``return`` (a comparison)."""
    if not returns:
        return None
    last = returns[-1]
    if not isinstance(last.expr, ast.Constant):
        data = _class_data(interp, cls, last.expr)
        if data is not None:
            return data
        for done in reversed(returns):
            if isinstance(done.value, list | tuple | set | frozenset) and done.value:
                return Location(done.path, done.line)
    return Location(last.path, last.line)


def deciding_lines(interp: Interpreter, cls: PyClass, facts: ClassAnswers) -> dict[str, Location]:
    """Column -> the line its answer was decided on (columns the class answered)."""
    out: dict[str, Location] = {}
    for column, method in ((c.title, c.question) for c in ASKED):
        if facts.cells.get(column) is None or column in facts.unknown:
            continue
        where = _definition(interp, cls, method)
        if where is None:
            continue
        capability = _capability_for(column, facts) or (9, 0)
        try:
            with interp.question(
                capability=capability, steps=STEPS_PER_CELL, fresh_memos=True
            ) as q:
                args = _argument(interp, cls, column, facts)
                bound = interp.getattr(cls, method, NODE, cls.path)
                returns = q.record_returns()
                interp.call(bound, args, {}, NODE, cls.path)
                where = _decider(interp, cls, returns) or where
        except (Unknown, Raised):
            pass
        out[column] = where
    return out


__all__ = ["deciding_lines"]
