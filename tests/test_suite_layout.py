"""The test suite's own layout: shared code lives in the helper modules (tests/*.py
and conftest.py), never in a test module another one imports, so each test
module can be read, run and moved on its own."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_no_test_module_imports_another():
    modules = sorted(TESTS.rglob("test_*.py"))
    assert len(modules) > 40
    test_names = {m.stem for m in modules}
    found = {str(m.relative_to(TESTS)): sorted(_imported_modules(m) & test_names) for m in modules}
    assert {k: v for k, v in found.items() if v} == {}


def test_the_check_sees_an_import(tmp_path):
    module = tmp_path / "test_x.py"
    module.write_text("import os\nfrom test_other import thing\n", encoding="utf-8")
    assert "test_other" in _imported_modules(module)


def test_test_modules_have_distinct_names():
    """pytest imports test modules by their base name (no packages under tests/):
    two folders holding ``test_x.py`` stop collection with an import mismatch."""
    names = sorted(m.name for m in TESTS.rglob("test_*.py"))
    assert sorted({n for n in names if names.count(n) > 1}) == []
