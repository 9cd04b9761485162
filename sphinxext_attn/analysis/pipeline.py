"""Run every rule over a tree and assemble the :class:`Analysis`.

Named apart from its function :func:`analyze`, so that ``sphinxext_attn.analysis``
can offer that function lazily: a submodule of the same name would replace it
in the package once imported.
"""

from __future__ import annotations

import ast
import gc
import os
from dataclasses import replace

from sphinxext_attn.model.environment import REFERENCE, Environment
from sphinxext_attn.model.records import (
    EXTRA_COLUMNS,
    Analysis,
    BackendFeatures,
    Diagnostic,
    Footnote,
    Location,
    PriorityList,
)
from sphinxext_attn.page import features
from sphinxext_attn.page.columns import (
    dcp,
    interface_columns,
    kv_excludes,
    page_columns,
    read_generator,
)
from sphinxext_attn.page.generator import read_page_text
from sphinxext_attn.page.prefill import read_prefill
from sphinxext_attn.page.priorities import page_priorities, read_priorities
from sphinxext_attn.page.variants import expand_variants, flash_attn_facts, flashinfer_facts
from sphinxext_attn.source.classes import ClassFinder, ClassRef, base_name
from sphinxext_attn.source.registry import RegistryEntry, read_registry
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.vocab.paths import VERSION_FILE

#: Parents that make a backend an MLA backend (besides ``is_mla()`` returning True).
MLA_PARENTS = frozenset({"MLACommonBackend", "FlashMLABackend", "FlashMLASparseBackend"})
#: Registry members that are not real backends.
SKIPPED = frozenset({"CUSTOM", "TORCH_SDPA"})
NON_CUDA_PREFIXES = ("CPU_", "ROCM_")
#: The words of a registry entry whose module file or class is not there (classes.py).
ABSENT = " not found"
#: Where a build writes the release's version (an installed distribution has it).


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
    for column, method in (
        ("Sink", "supports_sink"),
        ("Sparse", "is_sparse"),
        ("MM Prefix", "supports_mm_prefix"),
        ("Non-Causal", "supports_non_causal"),
        ("MLA", "is_mla"),
    ):
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
        supports_sink=flags["Sink"],
        is_sparse=flags["Sparse"],
        supports_mm_prefix=flags["MM Prefix"],
        supports_non_causal=flags["Non-Causal"],
        supports_dcp=flags["DCP"],
        sources=sources,
        extras=extras,
    )


PROFILES = ("runtime", "vllm-page")


def analyze(
    root: str | os.PathLike[str],
    source: SourceTree | None = None,
    profile: str = "runtime",
    provenance: bool = True,
    parallel: bool = False,
    extras: bool = True,
    environment: Environment = REFERENCE,
) -> Analysis:
    """Analyse the vLLM tree at ``root`` (the folder holding ``vllm/``). Never raises
    for problems in the tree: they are returned as diagnostics. ``provenance``
    False skips finding the line that decides each evaluated cell (a page
    without source links has no use for it); ``extras`` False skips the
    capabilities outside the release's page columns (a page that cannot show
    them). ``parallel`` (the command line):
    in the runtime profile, read the page in a forked process while this one
    evaluates the classes; in the ``vllm-page`` profile, syntax-check the rest
    of the backend files in one while this one reads the other tables. The
    result is the same.

    The cyclic garbage collector is paused meanwhile: the cached ASTs are
    millions of acyclic objects it would otherwise rescan on every parse.
    Pass ``source`` to keep the parsed files alive after the call (the command
    line exits without freeing them).
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        tree = source if source is not None else SourceTree(root)
        if profile != "runtime":
            result = _analyze(tree, page=True, parallel=parallel)
            result.profile = profile
            return result
        from sphinxext_attn.analysis import forked
        from sphinxext_attn.runtime.merge import evaluate_runtime, merge_runtime

        if parallel and forked.can_fork():
            # on a tree of its own, here too if the child failed (the same diagnostics)
            def read_page() -> Analysis:
                return _analyze(SourceTree(tree.root))

            page = forked.Forked(read_page)
            answers = evaluate_runtime(tree, provenance, extras, environment)
            child = page.result()  # None if the child failed
            result = child if isinstance(child, Analysis) else read_page()
        else:
            result = _analyze(tree)
            answers = evaluate_runtime(tree, provenance, extras, environment)
        result.profile = profile
        merge_runtime(result, answers)
        return result
    finally:
        if paused:
            gc.enable()


def _analyze(tree: SourceTree, page: bool = False, parallel: bool = False) -> Analysis:
    result = Analysis(root=str(tree.root))
    if not tree.safe_path("vllm") or not (tree.root / "vllm").is_dir():
        tree.warn(f"no vllm/ package under {tree.root}", None, subtype="root")
    finder = ClassFinder(tree)
    rows: list[BackendFeatures] = []
    refs: list[ClassRef] = []
    generator = read_generator(tree)
    excludes = kv_excludes(generator)
    entries = read_registry(tree)
    for entry in entries:
        if entry.name in SKIPPED:
            continue
        try:
            row = analyze_backend(tree, finder, entry, refs, excludes)
        except RecursionError:
            tree.warn(
                f"{entry.name}: expression nesting too deep", entry.location.path, subtype="syntax"
            )
            row = None
        if row is not None:
            rows.append(row)
    # The backend files are read: with ``parallel``, a forked process syntax-checks
    # the rest of them while this one reads the other tables (same warnings, order).
    checking = None
    if parallel:
        from sphinxext_attn.analysis import forked

        if forked.can_fork():
            checking = forked.Forked(tree.syntax_problems)
    result.priorities = page_priorities(tree) if page else read_priorities(tree)
    flash_attn = next((e for e in entries if e.name == "FLASH_ATTN"), None)
    fa_class = finder.resolve(flash_attn) if flash_attn else None  # cached: no second parse
    registered = {r.name for r in rows}
    fa = flash_attn_facts(tree, fa_class, "FLASH_ATTN" in registered)
    fi = flashinfer_facts(tree, "FLASHINFER" in registered)
    result.backends, result.footnotes = expand_variants(rows, fa, fi)
    if page:  # vLLM's page: its generator's layout and words
        result.page_text = read_page_text(generator)
        result.footnotes = _page_footnotes(result.footnotes, result)
    result.page_columns = page_columns(generator, rows)
    result.capability_columns = interface_columns(tree, refs)
    result.mla_prefill = read_prefill(tree, finder, fa, page)
    result.version = read_version(tree)
    checked = checking.result() if checking is not None else None
    tree.check_partly_parsed(checked if isinstance(checked, dict) else None)
    result.files = list(tree.files)
    result.directories = list(tree.directories)
    # reachable by the release's code, whatever lists vLLM's page shows
    reach = read_priorities(tree) if page else result.priorities
    result.diagnostics = unreachable_only(list(tree.diagnostics), reach)
    return result


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


def _page_footnotes(notes: list[Footnote], analysis: Analysis) -> list[Footnote]:
    """The footnotes under the standard table in the words of the release's generator."""
    text = analysis.page_text
    if text is None:
        return notes
    out = []
    for note in notes:
        theirs = text.table_note(note.marker)
        out.append(Footnote(note.marker, theirs.text) if theirs is not None else note)
    return out


def read_version(tree: SourceTree) -> str | None:
    """The release a tree is, from the folder name ``vllm-X.Y.Z``; else, as in an
    installed distribution, the string literal ``vllm/_version.py`` assigns to
    ``__version__`` (read, never run)."""
    name = tree.root.name
    if name.startswith("vllm-") and name[5:6].isdigit():
        return name[5:]
    if not tree.exists(VERSION_FILE):
        return None
    module = tree.parse(VERSION_FILE)
    for node in module.body if module is not None else []:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    return None
