"""Whether a platform's ``get_valid_backends`` only passes the configuration on
to the backend's ``validate_configuration``, read from how the loop is written
(the syntax of the one function): what lets :mod:`.selector_passthrough` ask a
backend's check alone.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from sphinxext_attn.selector.checks import CHECK_METHOD
from sphinxext_attn.vocab.names import PRIORITY_FUNCTION


def passed_through(node: ast.AST) -> Loop | None:
    """The one ``validate_configuration`` call of ``get_valid_backends`` (``node``)
    when its configuration parameters (all but the first) reach nothing else:
    read only as arguments of the priority function (``param`` or
    ``param.field``), or as ``name=param`` and ``**param._asdict()`` keywords of
    that call, never rebound; else None."""
    if not isinstance(node, ast.FunctionDef):
        return None
    spec = node.args
    params = {a.arg for a in (*spec.posonlyargs, *spec.args, *spec.kwonlyargs)[1:]}
    if spec.vararg or spec.kwarg or not params:
        return None
    parents: dict[int, ast.AST] = {}
    checks: list[ast.Call] = []
    for parent in ast.walk(node):
        for child in ast.iter_child_nodes(parent):
            parents[id(child)] = parent
        if parent is not node and isinstance(
            parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef
        ):
            return None  # a nested scope could keep a parameter for later
        if isinstance(parent, ast.Global | ast.Nonlocal):
            return None
        if isinstance(parent, ast.Call) and _is_check(parent):
            checks.append(parent)
    if len(checks) != 1 or checks[0].args:
        return None
    for name in ast.walk(node):
        if not isinstance(name, ast.Name):
            continue
        if name.id == PRIORITY_FUNCTION and not isinstance(name.ctx, ast.Load):
            return None  # the stand-in would not answer
        if name.id in params and not _passed(name, parents, checks[0]):
            return None
    passed = sorted(
        {n.id for kw in checks[0].keywords for n in ast.walk(kw.value) if isinstance(n, ast.Name)}
    )
    return Loop(checks[0], _kept_whole(node, checks[0], parents), tuple(passed))


@dataclass(frozen=True)
class Loop:
    """What :func:`passed_through` found of a loop that passes the configuration on."""

    #: its one ``validate_configuration`` call
    call: ast.Call
    #: whether it uses the check's list only whole (:func:`_kept_whole`)
    whole: bool
    #: the parameters that call passes on
    passed: tuple[str, ...] = ()


def _kept_whole(node: ast.FunctionDef, check: ast.Call, parents: dict[int, ast.AST]) -> bool:
    """Whether the loop uses the check's list only as a whole: the name it is bound
    to is read only as an ``if`` test or stored (alone or in a tuple) into a
    dictionary the loop only fills and returns; rebound only in an ``except``.
    Then two lists the test takes alike reach the answer the same way, each as
    itself."""
    bound = parents.get(id(check))
    if not (
        isinstance(bound, ast.Assign)
        and len(bound.targets) == 1
        and isinstance(bound.targets[0], ast.Name)
    ):
        return False
    name = bound.targets[0].id
    handlers = {
        id(n) for h in ast.walk(node) if isinstance(h, ast.ExceptHandler) for n in ast.walk(h)
    }
    kept_in: set[str] = set()
    for use in ast.walk(node):
        if not isinstance(use, ast.Name) or use.id != name or use is bound.targets[0]:
            continue
        up = parents.get(id(use))
        if not isinstance(use.ctx, ast.Load):
            if id(use) in handlers:
                continue
            return False
        if isinstance(up, ast.If) and up.test is use:
            continue
        if isinstance(up, ast.Tuple) and isinstance(up.ctx, ast.Load):
            up = parents.get(id(up))
        if not isinstance(up, ast.Assign) or not all(
            isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) for t in up.targets
        ):
            return False
        kept_in.update(t.value.id for t in up.targets)  # type: ignore[attr-defined]
    for use in ast.walk(node):
        if isinstance(use, ast.Name) and use.id in kept_in and isinstance(use.ctx, ast.Load):
            up = parents.get(id(use))
            if isinstance(up, ast.Subscript) and isinstance(up.ctx, ast.Store):
                continue
            if isinstance(up, ast.Tuple):
                up = parents.get(id(up))
            if not isinstance(up, ast.Return):
                return False
    return True


def _is_check(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr == CHECK_METHOD


def _passed(name: ast.Name, parents: dict[int, ast.AST], check: ast.Call) -> bool:
    """``name`` (a parameter) is only handed on: see :func:`passed_through`."""
    if not isinstance(name.ctx, ast.Load):
        return False
    up = parents.get(id(name))
    if isinstance(up, ast.keyword) and parents.get(id(up)) is check and up.arg is not None:
        return True  # name=param
    if (
        isinstance(up, ast.Attribute)
        and up.attr == "_asdict"
        and isinstance(call := parents.get(id(up)), ast.Call)
        and not call.args
        and not call.keywords
        and isinstance(kw := parents.get(id(call)), ast.keyword)
        and kw.arg is None
        and parents.get(id(kw)) is check
    ):
        return True  # **param._asdict()
    arg: ast.AST = name
    if isinstance(up, ast.Attribute) and isinstance(up.ctx, ast.Load):
        arg, up = up, parents.get(id(up))
    if isinstance(up, ast.keyword):
        arg, up = up, parents.get(id(up))
    return (
        isinstance(up, ast.Call)
        and isinstance(up.func, ast.Name)
        and up.func.id == PRIORITY_FUNCTION
        and (arg in up.args or arg in up.keywords)
    )


__all__ = ["Loop", "passed_through"]
