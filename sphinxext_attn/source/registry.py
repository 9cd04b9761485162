"""Read the backend registry: enum member name -> class path, without importing it."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from sphinxext_attn.model.records import Location
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.vocab.names import REGISTRY_ENUM
from sphinxext_attn.vocab.paths import REGISTRY_FILE, REGISTRY_FILES


@dataclass(frozen=True)
class RegistryEntry:
    name: str
    class_path: str
    location: Location


def _string_value(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def read_enum(tree: SourceTree, path: str, enum_name: str) -> list[RegistryEntry]:
    """Members of an enum class whose value is a non-empty class path string."""
    module = tree.parse(path)
    if module is None:
        return []
    enum = next(
        (n for n in ast.walk(module) if isinstance(n, ast.ClassDef) and n.name == enum_name),
        None,
    )
    if enum is None:
        tree.warn(f"class {enum_name} not found", path, subtype="registry")
        return []
    entries: list[RegistryEntry] = []
    for item in enum.body:
        if isinstance(item, ast.Assign):
            targets, value = item.targets, item.value
        elif isinstance(item, ast.AnnAssign) and item.value is not None:
            targets, value = [item.target], item.value
        else:
            continue
        class_path = _string_value(value)
        for target in targets:
            if isinstance(target, ast.Name) and class_path:
                entries.append(RegistryEntry(target.id, class_path, Location(path, item.lineno)))
    if not entries:
        tree.warn(f"{enum_name} has no backends", path, enum.lineno, "registry")
    return entries


def read_registry(tree: SourceTree) -> list[RegistryEntry]:
    """The attention backends of ``AttentionBackendEnum``, from the newest home of
    the registry the tree has (none: the newest home's "file not found")."""
    return read_enum(tree, tree.first_present(REGISTRY_FILES) or REGISTRY_FILE, REGISTRY_ENUM)
