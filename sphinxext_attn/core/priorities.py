"""CUDA priority lists, read from the conditions that guard each returned list.

``_get_backend_priorities`` in ``vllm/platforms/cuda.py`` returns a list of
``AttentionBackendEnum.X`` members under nested ``if`` statements. Instead of
trusting the position of a branch, each ``return [...]`` is classified by the
conditions on its path: ``use_mla`` decides the category, a Blackwell check
(``major == 10`` or ``is_device_capability_family(100)``) decides the arch.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from sphinxext_attn.core.flags import capability_family
from sphinxext_attn.core.models import Location, PriorityList
from sphinxext_attn.core.source import SourceTree

CUDA_PLATFORM_FILE = "vllm/platforms/cuda.py"
PRIORITY_FUNCTION = "_get_backend_priorities"
#: A guard is (test expression, taken branch is the true one).
Guard = tuple[ast.expr, bool]


def _mentions_mla(test: ast.expr) -> bool:
    return any(
        (isinstance(n, ast.Name) and n.id == "use_mla")
        or (isinstance(n, ast.Attribute) and n.attr == "use_mla")
        for n in ast.walk(test)
    )


def _is_blackwell(test: ast.expr) -> bool:
    """``x.major == 10`` or ``is_device_capability_family(100)``."""
    if (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Attribute)
        and test.left.attr == "major"
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.comparators[0], ast.Constant)
    ):
        return test.comparators[0].value == 10
    return capability_family(test) == 100


def _enum_members(node: ast.expr | None) -> list[str] | None:
    if not isinstance(node, ast.List):
        return None
    return [e.attr for e in node.elts if isinstance(e, ast.Attribute)]


def _returns(body: list[ast.stmt], guards: list[Guard]) -> Iterator[tuple[ast.Return, list[Guard]]]:
    """Every ``return`` in a statement list with the conditions that lead to it."""
    for stmt in body:
        if isinstance(stmt, ast.Return):
            yield stmt, guards
        elif isinstance(stmt, ast.If):
            yield from _returns(stmt.body, [*guards, (stmt.test, True)])
            yield from _returns(stmt.orelse, [*guards, (stmt.test, False)])


def _classify(guards: list[Guard]) -> tuple[str, str]:
    category, arch = "standard", "default"
    for test, taken in guards:
        if _mentions_mla(test) and taken:
            category = "mla"
        if _is_blackwell(test):
            arch = "sm100" if taken else "default"
    return category, arch


def read_priorities(tree: SourceTree) -> list[PriorityList]:
    """Priority lists in the seed's order: standard then MLA, Blackwell then default."""
    module = tree.parse(CUDA_PLATFORM_FILE)
    if module is None:
        return []
    func = next(
        (n for n in ast.walk(module) if isinstance(n, ast.FunctionDef) and n.name == PRIORITY_FUNCTION),
        None,
    )
    if func is None:
        tree.warn(f"function {PRIORITY_FUNCTION} not found", CUDA_PLATFORM_FILE, subtype="priority")
        return []
    found: dict[tuple[str, str], PriorityList] = {}
    for ret, guards in _returns(func.body, []):
        members = _enum_members(ret.value)
        if not members:
            continue
        category, arch = _classify(guards)
        found[(category, arch)] = PriorityList(
            category, arch, tuple(members), Location(CUDA_PLATFORM_FILE, ret.lineno)
        )
    order = [(c, a) for c in ("standard", "mla") for a in ("sm100", "default")]
    return [found[k] for k in order if k in found]
