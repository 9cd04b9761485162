"""One backend's row as vLLM's generator reads it, from the literal class body.

Shared by both profiles: the ``vllm-page`` analysis is these rows, and the
runtime profile keeps their table (MLA, model family) and registry filtering.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sphinxext_attn.model.columns import EXTRA_COLUMNS, FLAGS
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
) -> BackendFeatures | None:
    """One backend's row as vLLM's generator reads it. ``excludes``: the KV dtypes
    the release's generator leaves out per backend (None: no generator; an entry
    commented as an alias of another is shown once instead)."""
    ref = finder.resolve(entry)
    if ref is None:
        return None
    if refs is not None:
        refs.append(ref)
    path = ref.path
    scope = [ref]
    sources: dict[str, Location] = {"Backend": Location(path, ref.node.lineno)}

    def note(column: str, loc: Location | None) -> None:
        if loc is not None:
            sources[column] = loc

    dtypes, loc = features.dtypes(scope)
    note("Dtypes", loc)
    kv, loc = features.kv_cache_dtypes(scope, tree.lines if excludes is None else None)
    if excludes:
        kv = tuple(d for d in kv if d not in excludes.get(entry.name, ()))
    note("KV Dtypes", loc)
    blocks, loc = features.block_sizes(scope)
    note("Block Sizes", loc)
    heads, loc = features.head_sizes(scope)
    note("Head Sizes", loc)
    attn_types, loc = features.attention_types(scope)
    note("Attention Types", loc)
    if entry.name.startswith(NON_CUDA_PREFIXES):
        capability = "N/A"
    else:
        capability, loc = features.compute_capability(scope)
        note("Compute Cap.", loc)
    flags: dict[str, bool] = {}
    # the flags the class body states; DCP is the impl class's (vLLM's generator)
    page_flags = [(c.title, c.question) for c in FLAGS if not c.impl_attribute]
    for column, method in (*page_flags, ("MLA", "is_mla")):
        flags[column], loc = features.flag(scope, method)
        note(column, loc)
    flags["DCP"], loc = dcp(tree, ref)
    note("DCP", loc)
    # further capabilities, read as the page reads its flags (``:columns:`` can ask)
    extras: dict[str, object] = {m: features.flag(scope, m)[0] for m in EXTRA_COLUMNS.values()}
    first_base = base_name(ref.node.bases[0]) if ref.node.bases else None
    is_mla = (
        first_base in MLA_PARENTS
        or ".mla." in entry.class_path.lower()
        or "_mla" in entry.name.lower()
        or flags["MLA"]
    )
    flag_fields: dict[str, Any] = {c.field: flags[c.title] for c in FLAGS}
    return BackendFeatures(
        family=model_family(entry, is_mla),
        name=entry.name,
        class_path=entry.class_path,
        dtypes=dtypes,
        kv_cache_dtypes=kv,
        block_sizes=blocks,
        head_sizes=heads,
        attn_types=attn_types,
        compute_capability=capability,
        is_mla=is_mla,
        **flag_fields,
        sources=sources,
        extras=extras,
    )


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
