"""The package's modules import each other without a cycle, counting imports made
inside functions (once used to hide cycles) and leaving out those under
``if TYPE_CHECKING:`` (never run). A cycle makes the order modules load in
matter, and hides which subsystem stands on which."""

from __future__ import annotations

import ast
from pathlib import Path

import sphinxext_attn

PACKAGE = Path(sphinxext_attn.__file__).resolve().parent


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_only(module: ast.Module) -> set[int]:
    """The import nodes under ``if TYPE_CHECKING:``."""
    out: set[int] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return out


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports, at any depth of its code.
    ``from pkg import sub`` is an edge to ``pkg.sub`` only (``pkg`` is loaded
    first either way); ``from pkg import name`` is an edge to ``pkg``."""
    files = {_module_name(p, root): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        module = ast.parse(path.read_text(encoding="utf-8"), str(path))
        skip = _type_checking_only(module)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in ast.walk(module):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                edges |= {a.name for a in node.names if a.name in files}
            elif isinstance(node, ast.ImportFrom):
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = (
                    (f"{base}.{node.module}" if node.module else base)
                    if node.level
                    else node.module or ""
                )
                subs = {f"{target}.{a.name}" for a in node.names} & files.keys()
                edges |= subs
                if target in files and len(subs) < len(node.names):
                    edges.add(target)
        edges.discard(name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_package_has_no_import_cycle() -> None:
    graph = import_graph(PACKAGE)
    assert len(graph) > 100
    assert cycles(graph) == []


def test_a_cycle_through_a_function_local_import_is_found(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.b import thing\n")
    (pkg / "b.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg.c import other\n"
        "def thing():\n    from pkg import a\n    return a\n"
    )
    (pkg / "c.py").write_text("from . import b\n")
    graph = import_graph(pkg)
    assert graph["pkg.b"] == {"pkg.a"}  # the TYPE_CHECKING import is no edge
    assert graph["pkg.c"] == {"pkg.b"}  # a relative import of a submodule
    assert cycles(graph) == [["pkg.a", "pkg.b"]]
