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


#: statement lists of a node that can hold an import
_BODIES = ("body", "orelse", "finalbody", "handlers")


def _import_blocks(statements: list[ast.stmt]) -> list[list[ast.stmt]]:
    """The runs of imports in one statement list, each on the line after the last."""
    blocks: list[list[ast.stmt]] = []
    for stmt in statements:
        if not isinstance(stmt, ast.Import | ast.ImportFrom):
            continue
        last = blocks[-1][-1] if blocks else None
        if last is not None and last.end_lineno is not None and stmt.lineno == last.end_lineno + 1:
            blocks[-1].append(stmt)
        else:
            blocks.append([stmt])
    return blocks


def _reason_above(lines: list[str], lineno: int) -> str:
    """The comment lines directly above line ``lineno`` (1-based), joined."""
    found: list[str] = []
    index = lineno - 2
    while index >= 0 and lines[index].lstrip().startswith("#"):
        found.insert(0, lines[index].strip().lstrip("#").strip())
        index -= 1
    return " ".join(found)


def unexplained_local_imports(root: Path) -> list[str]:
    """``path:line`` of each import made inside a function with no reason given: a
    comment directly above it, or above the first of the imports on the lines
    just before it. An import waits for its function only for a cycle inside a
    subpackage or a start-up cost that was measured, and the comment says which."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        inside: list[ast.AST] = [
            fn
            for fn in ast.walk(ast.parse(text, str(path)))
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        seen: set[int] = set()
        for fn in inside:
            for node in ast.walk(fn):
                if id(node) in seen:
                    continue
                seen.add(id(node))
                for field in _BODIES:
                    statements = getattr(node, field, None)
                    if not isinstance(statements, list):
                        continue
                    for block in _import_blocks(statements):
                        reason = _reason_above(lines, block[0].lineno)
                        if len(reason.split()) < 3 or reason.startswith(("noqa", "type:")):
                            rel = path.relative_to(root.parent)
                            found += [f"{rel}:{stmt.lineno}" for stmt in block]
    return found


def test_every_import_inside_a_function_says_why() -> None:
    """Imports belong at the top of a module; one left inside a function names its
    reason on the line above (a cycle, or a start-up cost and its measurement)."""
    assert unexplained_local_imports(PACKAGE) == []


def test_a_local_import_without_a_reason_is_found(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("import os\n")  # at the top: no reason needed
    (pkg / "a.py").write_text(
        "def bare():\n"
        "    import json\n"
        "    return json\n"
        "def explained():\n"
        "    # lazy: json costs 2 ms at start-up (-X importtime)\n"
        "    import json\n"
        "    import csv\n"
        "\n"
        "    import re\n"
        "    return json, csv, re\n"
        "class K:\n"
        "    def method(self):\n"
        "        if self:\n"
        "            #\n"
        "            from os import path\n"
        "        try:\n"
        "            # noqa: PLC0415\n"
        "            import ast\n"
        "        finally:\n"
        "            # a cycle: pkg.b imports this module\n"
        "            from pkg import b\n"
        "        def inner():\n"
        "            import sys\n"
        "        return path, ast, b, inner\n"
    )
    assert unexplained_local_imports(pkg) == [
        "pkg/a.py:2",  # nothing above
        "pkg/a.py:9",  # a blank line ends the commented block above
        "pkg/a.py:15",  # an empty comment
        "pkg/a.py:18",  # a linter's pragma is no reason
        "pkg/a.py:23",  # a nested function's import counts too
    ]


#: the package's rooms from the bottom up; a room imports only from rooms below
#: it (its own modules aside), counting ``TYPE_CHECKING`` imports too: the
#: picture of which subsystem stands on which is docs/architecture.rst
FLOORS: dict[str, int] = {
    "vocab": 0,
    "version": 0,
    "parallel": 0,
    "model": 1,
    "source": 2,
    "render": 2,
    "pyeval": 3,
    "page": 3,
    "knowledge": 4,
    "runtime": 5,
    "models": 5,
    "selection": 6,
    "selector": 7,
    "analysis": 7,
    "cli": 8,
    "sphinx": 8,
    "__main__": 9,
    "__init__": 9,
}
#: rooms that never import Sphinx or docutils: the analysis core
CORE = ("vocab", "parallel", "model", "source", "pyeval", "page", "knowledge", "runtime")
CORE += ("selection", "selector", "analysis", "models")


def room_imports(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Room (subpackage, or top-level module) -> the other rooms it imports from,
    ``TYPE_CHECKING`` imports included; third-party roots under the key ``"<ext>"``."""
    out: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        room = parts[0].removesuffix(".py")
        mine = out.setdefault(room, set())
        ext = out.setdefault(f"{room}<ext>", set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
                if node.module == root.name:
                    names = [f"{root.name}.{a.name}" for a in node.names]
            for name in names:
                head, _, rest = name.partition(".")
                if head == root.name:
                    mine.add(rest.partition(".")[0])
                else:
                    ext.add(head)
        mine.discard(room)
    return out


def test_every_room_has_a_floor_and_imports_only_downward() -> None:
    graph = room_imports()
    rooms = {r for r in graph if not r.endswith("<ext>")}
    assert rooms == set(FLOORS)
    upward = sorted(
        f"{room} -> {other}"
        for room in rooms
        for other in graph[room]
        if FLOORS[other] >= FLOORS[room]
    )
    assert upward == []


def test_the_render_layer_reads_records_only() -> None:
    """Records in, nodes and text out: the renderer never asks the analysis."""
    assert room_imports()["render"] <= {"model", "vocab"}


def test_the_evaluator_knows_no_library() -> None:
    """Nothing in pyeval/ knows vLLM: the evaluator reads the tree (``source``) and
    nothing else of the package; vLLM's world plugs in from ``knowledge``."""
    assert room_imports()["pyeval"] <= {"source"}


def test_code_outside_the_evaluator_enters_by_its_front_door() -> None:
    """Outside ``pyeval/`` the evaluator is imported from ``sphinxext_attn.pyeval``
    (its public names), never from one of its modules."""
    inside = f"{PACKAGE.name}.pyeval"
    graph = import_graph(PACKAGE)
    through_a_side_door = sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        if not module.startswith(inside)
        for target in targets
        if target.startswith(f"{inside}.")
    )
    assert through_a_side_door == []


def test_the_front_door_names_what_it_loads() -> None:
    import sphinxext_attn.pyeval as front

    homes = front._HOMES
    assert front.__all__ == sorted(homes)
    for name, home in homes.items():
        module = __import__(f"{front.__name__}.{home}", fromlist=[name])
        assert getattr(front, name) is getattr(module, name), name


def test_the_core_never_imports_sphinx_or_docutils() -> None:
    graph = room_imports()
    for room in CORE:
        assert not graph[f"{room}<ext>"] & {"sphinx", "docutils", "myst_parser"}, room


def architecture_text(graph: dict[str, set[str]] | None = None) -> str:
    """The rooms floor by floor, each with what it imports (docs/architecture.rst)."""
    graph = graph or room_imports()
    lines = []
    for floor in sorted(set(FLOORS.values()), reverse=True):
        for room in sorted(r for r, f in FLOORS.items() if f == floor):
            below = ", ".join(sorted(graph[room])) or "(nothing of the package)"
            lines.append(f"   {floor}  {room:<10} -> {below}")
    return "\n".join(lines) + "\n"


def test_the_architecture_page_shows_the_rooms_as_they_are() -> None:
    """docs/architecture.rst's picture is regenerated by
    ``python tests/test_package_imports.py`` and checked here."""
    page = (DOCS / "architecture.rst").read_text(encoding="utf-8")
    start = page.index(BEGIN) + len(BEGIN)
    assert page[start : page.index(END)] == "\n" + architecture_text() + "\n"


BEGIN = ".. rooms-begin\n\n::\n"
#: the repository's docs (the package may be installed elsewhere, as tox installs it)
DOCS = Path(__file__).resolve().parents[1] / "docs"
END = ".. rooms-end"


if __name__ == "__main__":
    target = DOCS / "architecture.rst"
    text = target.read_text(encoding="utf-8")
    head, tail = text[: text.index(BEGIN) + len(BEGIN)], text[text.index(END) :]
    target.write_text(head + "\n" + architecture_text() + "\n" + tail, encoding="utf-8")
