"""Module-level state, listed: every module global that some code of the package
changes after import (an item set, a method that mutates, a ``global`` rebinding).

State at module level outlives a build or a run and is shared by everything in
the process, so each one is named here with what clears it; a new one fails this
test until it is given an owner (an object created by the front end and passed
down: the command line's ``RunCache``, the Sphinx build's ``BuildState`` kept on
its environment) or listed with its reason. The list is exact: one that goes
away must be taken off.
"""

from __future__ import annotations

import ast
from pathlib import Path

import sphinxext_attn

PACKAGE = Path(sphinxext_attn.__file__).resolve().parent

MUTATORS = frozenset(
    {"append", "add", "update", "clear", "pop", "popitem", "setdefault", "extend",
     "discard", "remove", "insert", "sort"}
)  # fmt: skip

#: module:NAME -> why it is module-level, and what clears it (none left: the plugins'
#: platforms, the last, are named on the plugins a run or build holds)
KNOWN: dict[str, str] = {}


def mutated_globals(root: Path = PACKAGE) -> set[str]:
    """``module:NAME`` of every module-level name that a function of the package
    changes (building a table at import is not state)."""
    found: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        module = ast.parse(path.read_text(encoding="utf-8"), str(path))
        names: set[str] = set()
        imported: dict[str, str] = {}  # a name taken from another module of the package
        for node in ast.walk(module):  # a function's own import of a global counts too
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(root.name):
                home = (node.module or "").removeprefix(root.name).strip(".").replace(".", "/")
                imported |= {a.asname or a.name: f"{home}.py:{a.name}" for a in node.names}
        for stmt in module.body:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else []
            if isinstance(stmt, ast.AnnAssign):
                targets = [stmt.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        changed: set[str] = set()
        inside = [
            n for n in ast.walk(module) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        subs: list[ast.AST] = [sub for fn in inside for sub in ast.walk(fn)]
        for node in subs:
            if isinstance(node, ast.Global):
                changed |= set(node.names) & names
            elif isinstance(node, ast.Subscript | ast.Attribute) and isinstance(
                node.ctx, ast.Store | ast.Del
            ):
                base = node.value
                if isinstance(base, ast.Name) and isinstance(node, ast.Subscript):
                    changed.add(base.id)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner = node.func.value
                if isinstance(owner, ast.Name) and node.func.attr in MUTATORS:
                    changed.add(owner.id)
        rel = path.relative_to(root).as_posix()
        found |= {f"{rel}:{name}" for name in changed & names}
        found |= {imported[name] for name in changed & imported.keys()}
    return found


def test_every_piece_of_module_state_is_listed_with_its_owner() -> None:
    found = mutated_globals()
    assert sorted(found - KNOWN.keys()) == [], "new module-level state: give it an owner"
    assert sorted(KNOWN.keys() - found) == [], "listed but gone: take it off KNOWN"


def test_the_search_sees_each_way_of_changing_a_global(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "A = {}\nB = []\nC = 0\nD = {}\nE = []\nE.append(1)\n"
        "def f():\n    global C\n    E.clear()\n    A['k'] = 1\n    B.append(2)\n"
        "    C = 3\n    return D.get(1)\n"
    )
    assert mutated_globals(tmp_path) == {"m.py:A", "m.py:B", "m.py:C", "m.py:E"}


def test_the_search_sees_a_global_changed_through_a_functions_import(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text("NAMES = {}\nKEPT = {}\n")
    (package / "b.py").write_text(
        "def f():\n    from pkg.a import KEPT, NAMES\n    NAMES.clear()\n    return KEPT\n"
    )
    assert mutated_globals(package) == {"a.py:NAMES"}
