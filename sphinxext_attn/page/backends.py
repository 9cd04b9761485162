"""One backend's row as vLLM's generator reads it, from the literal class body.

Shared by both profiles: the ``vllm-page`` analysis is these rows, and the
runtime profile keeps their table (MLA, model family) and registry filtering.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import replace
from functools import partial
from typing import Any

from sphinxext_attn.model.columns import COLUMN, EXTRA_COLUMNS, FLAGS
from sphinxext_attn.model.json_value import JsonObject
from sphinxext_attn.model.records import (
    BackendFeatures,
    Diagnostic,
    Location,
    PriorityList,
)
from sphinxext_attn.page import features
from sphinxext_attn.page.columns import dcp
from sphinxext_attn.source.classes import ClassFinder, ClassRef, base_name
from sphinxext_attn.source.registry import RegistryEntry
from sphinxext_attn.source.tree import SourceTree

#: Parents that make a backend an MLA backend (besides ``is_mla()`` returning True).
MLA_PARENTS = frozenset({"MLACommonBackend", "FlashMLABackend", "FlashMLASparseBackend"})
#: Registry members that are not real backends.
SKIPPED = frozenset({"CUSTOM", "TORCH_SDPA"})
NON_CUDA_PREFIXES = ("CPU_", "ROCM_")
#: In ``answered`` (see :func:`analyze_backend`): the further capability flags.
EXTRA_FLAGS = "extra flags"
#: The words of a registry entry whose module file or class is not there (classes.py).
ABSENT = " not found"


def model_family(entry: RegistryEntry, is_mla: bool) -> str:
    """Backends written for one model family get a table of their own.

    DeepSeek V4 backends live in ``vllm.models.deepseek_v4`` or carry a ``_DSV4``
    suffix; MiniMax backends are the non-MLA ones named ``MINIMAX*``.
    """
    if entry.name.endswith("_DSV4") or "deepseek_v4" in entry.class_path.split("."):
        return "dsv4"
    if entry.name.startswith("MINIMAX") and not is_mla:
        return "minimax"
    return ""


def analyze_backend(
    tree: SourceTree,
    finder: ClassFinder,
    entry: RegistryEntry,
    refs: list[ClassRef] | None = None,
    excludes: dict[str, frozenset[str]] | None = None,
    answered: Collection[str] = (),
) -> BackendFeatures | None:
    """One backend's row as vLLM's generator reads it. ``excludes``: the KV dtypes
    the release's generator leaves out per backend (None: no generator; an entry
    commented as an alias of another is shown once instead). ``answered``: columns
    not read (the runtime profile has their cells, and places, from the class's
    answers): they keep the record's defaults."""
    ref = finder.resolve(entry)
    if ref is None:
        return None
    if refs is not None:
        refs.append(ref)
    path = ref.path
    scope = [ref]
    sources: dict[str, Location] = {"Backend": Location(path, ref.node.lineno)}
    cells: dict[str, Any] = {}

    def read(column: str, reader: Callable[[], tuple[Any, Location | None]]) -> None:
        if column not in answered:
            cells[column], loc = reader()
            if loc is not None:
                sources[column] = loc

    read("Dtypes", partial(features.dtypes, scope))
    read("KV Dtypes", partial(_kv_dtypes, tree, scope, entry, excludes))
    read("Block Sizes", partial(features.block_sizes, scope))
    read("Head Sizes", partial(features.head_sizes, scope))
    read("Attention Types", partial(features.attention_types, scope))
    if entry.name.startswith(NON_CUDA_PREFIXES):
        cells["Compute Cap."] = "N/A"
    else:
        read("Compute Cap.", partial(features.compute_capability, scope))
    # the flags the class body states; DCP is the impl class's (vLLM's generator)
    for column in FLAGS:
        if not column.impl_attribute:
            read(column.title, partial(features.flag, scope, column.question))
    read("MLA", partial(features.flag, scope, "is_mla"))
    read("DCP", partial(dcp, tree, ref))
    # further capabilities, read as the page reads its flags (``:columns:`` can ask)
    extras: JsonObject = {}
    if EXTRA_FLAGS not in answered:
        extras = {m: features.flag(scope, m)[0] for m in EXTRA_COLUMNS.values()}
    first_base = base_name(ref.node.bases[0]) if ref.node.bases else None
    is_mla = (
        first_base in MLA_PARENTS
        or ".mla." in entry.class_path.lower()
        or "_mla" in entry.name.lower()
        or bool(cells.get("MLA"))
    )
    fields = {COLUMN[c].field: v for c, v in cells.items() if c in COLUMN}
    return BackendFeatures(
        family=model_family(entry, is_mla),
        name=entry.name,
        class_path=entry.class_path,
        is_mla=is_mla,
        **fields,
        sources=sources,
        extras=extras,
    )


def _kv_dtypes(
    tree: SourceTree,
    scope: list[ClassRef],
    entry: RegistryEntry,
    excludes: dict[str, frozenset[str]] | None,
) -> tuple[tuple[str, ...], Location | None]:
    kv, loc = features.kv_cache_dtypes(scope, tree.lines if excludes is None else None)
    if excludes:
        kv = tuple(d for d in kv if d not in excludes.get(entry.name, ()))
    return kv, loc


def unreachable_only(
    diagnostics: list[Diagnostic], priorities: list[PriorityList]
) -> list[Diagnostic]:
    """A registry entry whose module or class the release lacks is the release's
    problem (vLLM's own import fails the same way) only while no priority list
    reaches it; a backend vLLM tries (``TRITON_ATTN`` with its file deleted) is a
    real problem: a warning."""
    reachable = {name for p in priorities for name in p.backends}
    return [
        replace(d, release=False)
        if d.release and d.subtype == "missing" and d.backend in reachable and ABSENT in d.message
        else d
        for d in diagnostics
    ]
