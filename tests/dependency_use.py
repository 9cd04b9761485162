"""Which test modules run Sphinx, docutils or myst-parser code (the ``deps`` marker).

The package's analysis core (the evaluator, the readers, selection, the command
line, Markdown and JSON) imports none of the three, so its tests give the same
result on any version of them: only the interpreter changes what they do. The
version matrix therefore runs every test on each Python (py311, py312, py313),
and only the tests marked ``deps`` again on the dependency floors and ceilings
(``tox -e oldest`` / ``-e newest``). The marker is not written by hand: conftest.py
sets it from this module, so a new test is classified as it is written.

A test module is ``deps`` when it, or a helper module of ``tests/`` it imports,
imports ``sphinx``, ``docutils`` or ``myst_parser``, or a module of the package
that does (directly or through others; a package ``__init__`` counts by its
module-level imports only, since its functions run when Sphinx calls them), or
names Sphinx as a program to run (``-m sphinx``, ``sphinx-build``). A test using
a fixture of ``sphinx.testing`` is ``deps`` too (see conftest.py). The reading is
conservative: an import inside a function counts, wherever it is.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
PACKAGE_DIR = TESTS.parent / "sphinxext_attn"
PACKAGE = PACKAGE_DIR.name
#: The dependencies whose declared ranges ``oldest`` and ``newest`` exercise.
DEPENDENCIES = ("sphinx", "docutils", "myst_parser")
#: Sphinx run as a program, or Sphinx's own test application.
RUNS_SPHINX = re.compile(
    r"""["'](sphinx|sphinx-build|sphinx\.cmd\.build)["']|\bSphinxTestApp\b|\bmake_app\b"""
)
#: Fixtures of ``sphinx.testing.fixtures`` (loaded by pytest's addopts).
SPHINX_FIXTURES = frozenset(
    {"app", "make_app", "shared_result", "app_params", "test_params", "sphinx_test_tempdir"}
)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported_names(source: str, module: str = "", top_level_only: bool = False) -> set[str]:
    """Dotted names imported by ``source`` (``from a import b`` gives ``a`` and ``a.b``),
    relative imports resolved against ``module``; ``if TYPE_CHECKING:`` blocks skipped."""
    names: set[str] = set()
    package = module.rpartition(".")[0]

    def visit(nodes: list[ast.stmt] | list[ast.AST]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and _is_type_checking(node):
                visit(node.orelse)
                continue
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".") if package else []
                    parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
                    base = ".".join([*parts, base] if base else parts)
                names.add(base)
                names.update(f"{base}.{alias.name}" for alias in node.names)
            if top_level_only and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            visit(list(ast.iter_child_nodes(node)))

    visit(ast.parse(source).body)
    return names


def _is_dependency(name: str) -> bool:
    return any(name == dep or name.startswith(dep + ".") for dep in DEPENDENCIES)


@functools.cache
def package_modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    found = {}
    for path in PACKAGE_DIR.rglob("*.py"):
        parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


@functools.cache
def _direct(name: str) -> frozenset[str]:
    path = package_modules()[name]
    names = imported_names(
        path.read_text(encoding="utf-8"),
        name if path.name != "__init__.py" else f"{name}.__init__",
        top_level_only=path.name == "__init__.py",
    )
    parents = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
    return frozenset(names | parents)


@functools.cache
def sphinx_facing() -> frozenset[str]:
    """Package modules that import a dependency, directly or through other modules."""
    modules = package_modules()
    facing = {name for name in modules if any(_is_dependency(n) for n in _direct(name))}
    grew = True
    while grew:
        grew = False
        for name in modules:
            if name not in facing and _direct(name) & facing:
                facing.add(name)
                grew = True
    return frozenset(facing)


def _reaches(names: set[str]) -> bool:
    return any(_is_dependency(n) for n in names) or bool(names & sphinx_facing())


@functools.cache
def helper_uses_dependencies(helper: str, seen: frozenset[str] = frozenset()) -> bool:
    """Whether the helper module ``tests/<helper>.py`` uses a dependency."""
    path = TESTS / f"{helper}.py"
    return path.is_file() and uses_dependencies(path, seen | {helper})


@functools.cache
def uses_dependencies(path: Path, seen: frozenset[str] = frozenset()) -> bool:
    """Whether a test (or helper) module runs Sphinx, docutils or myst-parser code."""
    source = path.read_text(encoding="utf-8")
    names = imported_names(source)
    if _reaches(names) or RUNS_SPHINX.search(source):
        return True
    helpers = {n.split(".")[0] for n in names} - seen - {PACKAGE}
    return any(helper_uses_dependencies(h, seen) for h in sorted(helpers))
