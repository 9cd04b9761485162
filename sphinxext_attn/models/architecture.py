"""Which model class vLLM builds for a config's ``architectures``, read from the
release's model registry as it is written (``_VLLM_MODELS`` merges the
per-task tables in order; a later table wins, as ``{**a, **b}`` does)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from sphinxext_attn.model.records import Location
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.vocab.paths import MODEL_REGISTRY_FILE, MODELS_PACKAGE

REGISTRY_FILE = MODEL_REGISTRY_FILE
#: the table of every architecture vLLM implements itself
MERGED_TABLE = "_VLLM_MODELS"


@dataclass(frozen=True)
class Architecture:
    """An architecture name, the module and class vLLM builds for it, and where the
    registry says so."""

    name: str
    module: str
    class_name: str
    location: Location
    table: str


def _tables(module: ast.Module) -> dict[str, ast.Dict]:
    found: dict[str, ast.Dict] = {}
    for stmt in module.body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) else getattr(stmt, "target", None)
        value = getattr(stmt, "value", None)
        if isinstance(target, ast.Name) and isinstance(value, ast.Dict):
            found[target.id] = value
    return found


def _entries(table: ast.Dict) -> dict[str, tuple[str, str, int]]:
    out: dict[str, tuple[str, str, int]] = {}
    for key, value in zip(table.keys, table.values, strict=True):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            continue
        if isinstance(value, ast.Tuple) and len(value.elts) == 2:
            module, cls = value.elts
            if (
                isinstance(module, ast.Constant)
                and isinstance(module.value, str)
                and isinstance(cls, ast.Constant)
                and isinstance(cls.value, str)
            ):
                out[key.value] = (module.value, cls.value, key.lineno)
    return out


def find_architecture(tree: SourceTree, names: list[str]) -> Architecture | str:
    """The first of ``names`` the release implements itself; else why not (a reason)."""
    module = tree.parse(REGISTRY_FILE)
    if module is None:
        return f"the model registry {REGISTRY_FILE} cannot be read"
    tables = _tables(module)
    merged = tables.get(MERGED_TABLE)
    if merged is None:
        return f"no {MERGED_TABLE} table in {REGISTRY_FILE}"
    known: dict[str, tuple[str, str, int, str]] = {}
    for key, value in zip(merged.keys, merged.values, strict=True):
        if key is None and isinstance(value, ast.Name) and value.id in tables:
            for arch, (mod, cls, line) in _entries(tables[value.id]).items():
                known[arch] = (mod, cls, line, value.id)
    for name in names:
        if name in known:
            mod, cls, line, table = known[name]
            return Architecture(
                name, f"{MODELS_PACKAGE}.{mod}", cls, Location(REGISTRY_FILE, line), table
            )
    return (
        f"no architecture of {', '.join(names)} in {MERGED_TABLE} ({REGISTRY_FILE}): "
        "vLLM would use the Transformers backend or remote code, not read here"
    )
