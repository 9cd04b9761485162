"""CUDA priority lists, read from the conditions that guard each returned list.

``_get_backend_priorities`` in ``vllm/platforms/cuda.py`` returns a list of
``AttentionBackendEnum.X`` members under nested ``if`` statements. Instead of
trusting the position of a branch, each ``return [...]`` is classified by the
conditions on its path: ``use_mla`` decides the category, a compute-capability
check (``major == 10``, alone or in an ``and``) decides the architecture.
``*name`` entries are resolved from list assignments in the same block (and
one ``if`` level below it, the later one winning); entries that only appear
under an inline condition (``*([X] if flag else [])``) are not defaults and
are left out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from sphinxext_attn.model.records import Location, PriorityList
from sphinxext_attn.page.flags import capability_family, functions
from sphinxext_attn.source.lookup import statements_walk
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.vocab.names import PRIORITY_FUNCTION
from sphinxext_attn.vocab.paths import CUDA_PLATFORM_FILE

#: A guard is (test expression, whether the taken branch is the true one).
Guard = tuple[ast.expr, bool]


def _mentions_mla(test: ast.expr) -> bool:
    return any(
        (isinstance(n, ast.Name) and n.id == "use_mla")
        or (isinstance(n, ast.Attribute) and n.attr == "use_mla")
        for n in ast.walk(test)
    )


def _major_checked(test: ast.expr) -> int | None:
    """``x.major == N`` (or ``is_device_capability_family(N0)``), also inside an ``and``."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        for value in test.values:
            major = _major_checked(value)
            if major is not None:
                return major
        return None
    if (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Attribute)
        and test.left.attr == "major"
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.comparators[0], ast.Constant)
        and isinstance(test.comparators[0].value, int)
    ):
        return test.comparators[0].value
    family = capability_family(test)
    return family // 10 if family is not None else None


def _list_assignments(body: list[ast.stmt], depth: int = 0) -> dict[str, ast.List]:
    """``name = [...]`` in a block and one ``if`` level below it; the later one wins."""
    found: dict[str, ast.List] = {}
    for stmt in body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.List):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = stmt.value
        elif isinstance(stmt, ast.If) and depth == 0:
            found.update(_list_assignments(stmt.body, 1))
            found.update(_list_assignments(stmt.orelse, 1))
    return found


def _members(
    node: ast.List, names: dict[str, ast.List], enum: str | None, depth: int = 0
) -> list[str]:
    out: list[str] = []
    for elt in node.elts:
        if isinstance(elt, ast.Attribute):
            if enum is None or (isinstance(elt.value, ast.Name) and elt.value.id == enum):
                out.append(elt.attr)
        elif isinstance(elt, ast.Starred) and isinstance(elt.value, ast.Name) and depth < 4:
            target = names.get(elt.value.id)
            if target is not None:
                out.extend(_members(target, names, enum, depth + 1))
    return out


def _terminates(body: list[ast.stmt]) -> bool:
    """The block always leaves the function (so code after it runs only otherwise)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, ast.Return | ast.Raise):
        return True
    return isinstance(last, ast.If) and _terminates(last.body) and _terminates(last.orelse)


def _lists(
    body: list[ast.stmt], guards: list[Guard], assigned: bool
) -> Iterator[tuple[ast.stmt, ast.List, list[Guard], list[ast.stmt]]]:
    """Every ``return [...]`` (and ``x = [...]`` if ``assigned``) with the conditions
    that lead to it and its enclosing block. Code after an ``if`` whose body always
    returns is guarded by that condition being false."""
    for stmt in body:
        value = getattr(stmt, "value", None)
        if isinstance(value, ast.List) and (
            isinstance(stmt, ast.Return) or (assigned and isinstance(stmt, ast.Assign))
        ):
            yield stmt, value, guards, body
        elif isinstance(stmt, ast.If):
            yield from _lists(stmt.body, [*guards, (stmt.test, True)], assigned)
            yield from _lists(stmt.orelse, [*guards, (stmt.test, False)], assigned)
            if _terminates(stmt.body) and not _terminates(stmt.orelse):
                guards = [*guards, (stmt.test, False)]


def _unwrap(test: ast.expr) -> tuple[ast.expr, bool]:
    """Strip ``not`` (and read ``!=`` as a negated ``==``): (positive test, negated)."""
    negated = False
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negated = test.operand, not negated
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.NotEq):
        test = ast.Compare(left=test.left, ops=[ast.Eq()], comparators=test.comparators)
        negated = not negated
    return test, negated


def _classify(guards: list[Guard]) -> tuple[str, str, int]:
    """(category, arch, number of other conditions that must hold) of a guarded list."""
    category, arch, extra = "standard", "default", 0
    for raw, branch in guards:
        test, negated = _unwrap(raw)
        taken = branch != negated
        major = _major_checked(test)
        if _mentions_mla(test):
            category = "mla" if taken else category
        elif major is not None:
            arch = ("sm100" if major == 10 else f"sm{major}0") if taken else arch
        elif taken:
            extra += 1
    return category, arch, extra


def guarded_lists(module: ast.Module, enum: str) -> Iterator[tuple[list[str], str, int, int]]:
    """Lists of ``enum`` members built in any function of a module, returned or assigned:
    (members, arch, other conditions that must hold, line)."""
    for func in statements_walk(module):  # (functions are statements: no expression)
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for stmt, node, guards, block in _lists(func.body, [], assigned=True):
            members = _members(node, _list_assignments(block), enum)
            if members:
                _, arch, extra = _classify(guards)
                yield members, arch, extra, stmt.lineno


def read_priorities(tree: SourceTree) -> list[PriorityList]:
    """Priority lists: standard then MLA; Blackwell, the default, then other arches."""
    module = tree.parse(CUDA_PLATFORM_FILE)
    if module is None:
        return []
    func = functions(module).get(PRIORITY_FUNCTION)
    if func is None:
        tree.warn(
            f"function {PRIORITY_FUNCTION} not found", CUDA_PLATFORM_FILE, subtype="priority"
        )
        return []
    found: dict[tuple[str, str], PriorityList] = {}
    for ret, node, guards, block in _lists(func.body, [], assigned=False):
        members = _members(node, _list_assignments(block), None)
        if not members:
            continue
        category, arch, _ = _classify(guards)
        found.setdefault(
            (category, arch),
            PriorityList(category, arch, tuple(members), Location(CUDA_PLATFORM_FILE, ret.lineno)),
        )

    def order(key: tuple[str, str]) -> tuple[int, int, str]:
        category, arch = key
        return (category != "standard", {"sm100": 0, "default": 1}.get(arch, 2), arch)

    return [found[k] for k in sorted(found, key=order)]


# -- the lists vLLM's own page shows ----------------------------------------------


def _returned(block: list[ast.stmt]) -> tuple[ast.Return, list[str]] | None:
    """The first ``return [...]`` directly in a block, ``*name`` items resolved."""
    for stmt in block:
        if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.List):
            return stmt, _members(stmt.value, _list_assignments(block), None)
    return None


def _page_lists(
    body: list[ast.stmt], category: str, found: dict[tuple[str, str], PriorityList]
) -> None:
    """vLLM's generator reads a category's lists one level deep: an ``if`` on
    ``major == 10`` gives Blackwell's list from its body and the default from its
    ``else`` (any other test, the other way round); a list behind an ``elif`` is
    not read; a bare return is the default."""
    for stmt in body:
        branches: list[tuple[list[ast.stmt], str]] = []
        if isinstance(stmt, ast.If):
            blackwell = _major_checked(stmt.test) == 10
            first, other = ("sm100", "default") if blackwell else ("default", "sm100")
            branches = [(stmt.body, first), (stmt.orelse, other)]
        elif isinstance(stmt, ast.Return):
            branches = [([stmt], "default")]
        for block, arch in branches:
            got = _returned(block)
            if got is not None and got[1]:
                ret, members = got
                found[(category, arch)] = PriorityList(
                    category, arch, tuple(members), Location(CUDA_PLATFORM_FILE, ret.lineno)
                )


def page_priorities(tree: SourceTree) -> list[PriorityList]:
    """The priority lists vLLM's own page shows (the ``vllm-page`` profile): only
    those its generator finds, which misses a default list behind an ``elif``."""
    module = tree.parse(CUDA_PLATFORM_FILE)
    func = functions(module).get(PRIORITY_FUNCTION) if module is not None else None
    if func is None:
        return read_priorities(tree)  # the same warning
    found: dict[tuple[str, str], PriorityList] = {}
    for stmt in func.body:
        if not isinstance(stmt, ast.If):
            continue
        if isinstance(stmt.test, ast.Name) and stmt.test.id == "use_mla":
            _page_lists(stmt.body, "mla", found)
            _page_lists(stmt.orelse, "standard", found)
        else:
            _page_lists([stmt], "standard", found)
    order = [(c, a) for c in ("standard", "mla") for a in ("sm100", "default")]
    return [found[k] for k in order if k in found]
