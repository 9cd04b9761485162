"""The compute capabilities a backend's check tells apart, beyond the contract's grid.

``supports_compute_capability`` is asked on the grid of the contract (7.0 to
12.1), but the code compares with capabilities off it: ``has_device_capability(60)``,
``capability.major > 12``, ``is_device_capability((10, 7))``. The check is run
once on each grid capability, with the memos set aside so every function it
reaches really runs, and the functions it ran are read for the capabilities
they name: a ``DeviceCapability(a, b)`` or ``(a, b)`` pair, an int ``NN`` passed
to a ``*device_capability*`` call or compared with ``to_int()``, a major compared
with ``.major``. Each becomes a point of its own (a major also its successor's
``N+1.0``, so "later GPUs" is asked), and the check is asked on them too: the
answer is then exact over every capability the code can tell apart.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import Any

from sphinxext_attn.pyeval import Interpreter, PyFunction, Raised, Unknown

Capability = tuple[int, int]
#: Majors outside this range are not GPUs (a size, a count): not capabilities.
MAJORS = range(5, 21)


def traced_functions(
    interp: Interpreter, grid: Iterable[Capability], ask: Callable[[Capability], Any]
) -> list[PyFunction]:
    """The tree functions ``ask`` runs on the grid, with fresh memos (so a call a
    memo would answer runs and is seen)."""
    with interp.tracing() as called:
        for cap in grid:
            try:
                ask(cap)
            except (Unknown, Raised):
                continue
        return list(called.values())


def named_capabilities(functions: Iterable[PyFunction]) -> set[Capability]:
    """The capabilities the functions' code names (see the module docstring), and
    those of a module constant they read (``_CAPS = ((10, 0), (10, 7))``)."""
    found: set[Capability] = set()
    for func in functions:
        values = getattr(func.module, "values", {})
        for node in ast.walk(func.node):
            if isinstance(node, ast.Call):
                found |= _from_call(node)
            elif isinstance(node, ast.Compare):
                found |= _from_compare(node)
            elif isinstance(node, ast.Tuple):
                found |= _pair(node)
            elif isinstance(node, ast.Name) and isinstance(values.get(node.id), tuple | list):
                found |= _pairs_of(values[node.id])
    return {c for c in found if c[0] in MAJORS and 0 <= c[1] <= 9}


def _pairs_of(value: tuple[Any, ...] | list[Any]) -> set[Capability]:
    """The ``(major, minor)`` pairs of an evaluated tuple or list of them."""
    return {
        (v[0], v[1])
        for v in list(value)[:64]
        if isinstance(v, tuple)
        and len(v) == 2
        and all(type(x) is int for x in v)
        and 0 <= v[1] <= 9
    }


def points(grid: Iterable[Capability], named: set[Capability]) -> list[Capability]:
    """The grid and the named capabilities, each named major with its successor."""
    out = set(grid) | named
    for major, _ in named:
        out |= {(major, 0), (major + 1, 0)}
    return sorted(c for c in out if c[0] in MAJORS)


def _ints(node: ast.AST) -> list[int]:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and type(e.value) is int]
    return []


def _pair(node: ast.AST) -> set[Capability]:
    """``(10, 7)``: a literal pair of small ints."""
    if isinstance(node, ast.Tuple) and len(node.elts) == 2:
        ints = _ints(node)
        if len(ints) == 2 and 0 <= ints[1] <= 9:
            return {(ints[0], ints[1])}
    return set()


def _of_int(value: int) -> set[Capability]:
    """``89`` -> 8.9; ``100`` -> 10.0."""
    return {divmod(value, 10)} if 50 <= value < 210 else set()


def _from_call(node: ast.Call) -> set[Capability]:
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    args = node.args
    if name == "DeviceCapability" and len(args) == 2:
        ints = [i for a in args for i in _ints(a)]
        return {(ints[0], ints[1])} if len(ints) == 2 else set()
    if "device_capability" in name and args:
        ints = _ints(args[0])
        if len(ints) == 2 and isinstance(args[0], ast.Tuple):
            return {(ints[0], ints[1])}
        return {c for i in ints for c in _of_int(i)}
    return set()


def _from_compare(node: ast.Compare) -> set[Capability]:
    sides = [node.left, *node.comparators]
    kinds = {_side_kind(s) for s in sides}
    found: set[Capability] = set()
    for side in sides:
        if "major" in kinds:
            found |= {(i, 0) for i in _ints(side)}
        if "to_int" in kinds:
            found |= {c for i in _ints(side) for c in _of_int(i)}
        if isinstance(side, ast.Tuple | ast.List | ast.Set):
            for item in side.elts:
                found |= _pair(item)
    return found


def _side_kind(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute) and node.attr == "major":
        return "major"
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "to_int"
    ):
        return "to_int"
    return ""
