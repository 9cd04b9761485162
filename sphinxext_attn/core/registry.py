"""Read the backend registry: enum member name -> class path, without importing it."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from sphinxext_attn.core.models import Location
from sphinxext_attn.core.source import SourceTree

BACKENDS_DIR = "vllm/v1/attention/backends"
REGISTRY_FILE = f"{BACKENDS_DIR}/registry.py"
REGISTRY_ENUM = "AttentionBackendEnum"


@dataclass(frozen=True)
class RegistryEntry:
    name: str
    class_path: str
    location: Location


def _string_value(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def read_registry(tree: SourceTree) -> list[RegistryEntry]:
    """Members of ``AttentionBackendEnum`` whose value is a non-empty class path string."""
    module = tree.parse(REGISTRY_FILE)
    if module is None:
        return []
    enum = next(
        (n for n in ast.walk(module) if isinstance(n, ast.ClassDef) and n.name == REGISTRY_ENUM),
        None,
    )
    if enum is None:
        tree.warn(f"class {REGISTRY_ENUM} not found", REGISTRY_FILE, subtype="registry")
        return []
    entries: list[RegistryEntry] = []
    for item in enum.body:
        if isinstance(item, ast.Assign):
            targets, value = item.targets, item.value
        elif isinstance(item, ast.AnnAssign) and item.value is not None:
            targets, value = [item.target], item.value
        else:
            continue
        path = _string_value(value)
        for target in targets:
            if isinstance(target, ast.Name) and path:
                entries.append(RegistryEntry(target.id, path, Location(REGISTRY_FILE, item.lineno)))
    if not entries:
        tree.warn(f"{REGISTRY_ENUM} has no backends", REGISTRY_FILE, enum.lineno, "registry")
    return entries
