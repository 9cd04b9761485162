"""Find a class in the tree, statically, following imports across files.

A registry path may name a module that only imports the class
(``from .impl import XBackend``); such names are resolved through ``import``
statements to files inside the tree, with bounded depth and no cycles.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from sphinxext_attn.source.registry import RegistryEntry
from sphinxext_attn.source.tree import SourceTree

#: How many re-export hops are followed before giving up.
MAX_DEPTH = 12


@dataclass(frozen=True)
class ClassRef:
    """A class definition and the tree-relative file holding it."""

    path: str
    node: ast.ClassDef

    @property
    def name(self) -> str:
        return self.node.name


def module_package(path: str) -> str:
    """The dotted package a file belongs to (for relative imports)."""
    parts = path.removesuffix(".py").split("/")
    return ".".join(parts[:-1])  # drops the module name, or ``__init__``


def absolute_module(path: str, module: str | None, level: int) -> str | None:
    """Turn ``from <level dots><module> import`` in ``path`` into a dotted name."""
    if level == 0:
        return module
    package = module_package(path).split(".")
    if level - 1 > len(package):
        return None
    base = package[: len(package) - (level - 1)]
    if module:
        base.append(module)
    return ".".join(p for p in base if p) or None


def _built_at_run_time(module: ast.Module, name: str) -> ast.stmt | None:
    """A top-level ``name = factory(...)``: a class the release makes when imported."""
    for node in module.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Call):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return node
    return None


def base_name(expr: ast.expr) -> str | None:
    """``Foo`` or ``mod.Foo`` -> the simple name ``Foo`` (subscripts unwrapped)."""
    if isinstance(expr, ast.Subscript):
        expr = expr.value
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return None


class ClassFinder:
    """Resolves class names to definitions in the tree, caching by (file, name)."""

    def __init__(self, tree: SourceTree) -> None:
        self.tree = tree
        self._cache: dict[tuple[str, str], ClassRef | None] = {}

    def resolve(self, entry: RegistryEntry) -> ClassRef | None:
        """The class a registry entry names, strictly inside the tree; every way it
        can fail (malformed path, outside the tree, no module, no class) is a warning."""
        module, _, class_name = entry.class_path.rpartition(".")
        candidates = SourceTree.module_file_candidates(module)
        where = (entry.location.path, entry.location.line)
        if not class_name.isidentifier() or not candidates:
            self.tree.warn(
                f"{entry.name}: malformed class path {entry.class_path!r}", *where, "registry"
            )
            return None
        if self.tree.is_outside(candidates[0]):
            self.tree.warn(
                f"{entry.name}: class path {entry.class_path!r} resolves outside the source tree",
                *where,
                "outside",
            )
            return None
        if not self.tree.owns(module):
            self.tree.warn(
                f"{entry.name}: class path {entry.class_path!r} is outside the vllm package",
                *where,
                "outside",
            )
            return None
        path = self.tree.module_file(module)  # a module file, or a package's __init__.py
        if path is None:
            self.tree.warn(
                f"{entry.name}: module file {candidates[0]} not found",
                *where,
                "missing",
                # a module the release lacks, as vLLM's import would find; a warning
                # after all if a priority list reaches it (see unreachable_only)
                release=True,
                backend=entry.name,
            )
            return None
        ref = self.find(path, class_name)
        module_ast = self.tree.parse(path) if ref is None else None
        built = _built_at_run_time(module_ast, class_name) if module_ast else None
        if built is not None:
            self.tree.warn(
                f"{entry.name}: {class_name} is built at run time, not by a class statement",
                path,
                built.lineno,
                "missing",
                release=True,
                backend=entry.name,
            )
        elif module_ast is not None:
            self.tree.warn(
                f"{entry.name}: class {class_name} not found in {path} (registered at "
                f"{entry.location})",
                path,
                subtype="missing",
                release=True,  # as vLLM's import would fail; see unreachable_only
                backend=entry.name,
            )
        return ref

    def find(self, path: str, name: str, depth: int = 0) -> ClassRef | None:
        """The class ``name`` as seen from module ``path`` (defined or imported there)."""
        key = (path, name)
        if key in self._cache:
            return self._cache[key]
        self._cache[key] = None
        found = self._find(path, name, depth)
        self._cache[key] = found
        return found

    def _find(self, path: str, name: str, depth: int) -> ClassRef | None:
        segment = self.tree.class_segment(path, name)
        if segment is not None:
            return ClassRef(path, segment)
        module = self.tree.parse(path)
        if module is None or depth > MAX_DEPTH:
            return None
        for node in module.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return ClassRef(path, node)
        imported = self._imported(module, path, name)
        if imported is not None:
            target_module, target_name = imported
            target = self.tree.module_file(target_module)
            if target is None:
                # ``from pkg import module`` then ``module.Class`` is handled by callers;
                # here the name may be a submodule, which is not a class.
                return None
            return self.find(target, target_name, depth + 1)
        # Classes nested in ``if TYPE_CHECKING`` or try blocks still count.
        for found in ast.walk(module):
            if isinstance(found, ast.ClassDef) and found.name == name:
                return ClassRef(path, found)
        return None

    @staticmethod
    def _imported(module: ast.Module, path: str, name: str) -> tuple[str, str] | None:
        for node in ast.walk(module):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        dotted = absolute_module(path, node.module, node.level)
                        if dotted:
                            return dotted, alias.name
        return None
