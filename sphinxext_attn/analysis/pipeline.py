"""Run every rule over a tree and assemble the :class:`Analysis`.

Named apart from its function :func:`analyze`, so that ``sphinxext_attn.analysis``
can offer that function lazily: a submodule of the same name would replace it
in the package once imported.
"""

from __future__ import annotations

import gc
import os
from typing import TYPE_CHECKING

from sphinxext_attn.model.environment import REFERENCE, Environment
from sphinxext_attn.model.key import AnalysisKey
from sphinxext_attn.model.records import (
    Analysis,
    BackendFeatures,
    Footnote,
)
from sphinxext_attn.page.backends import SKIPPED, analyze_backend, unreachable_only
from sphinxext_attn.page.columns import (
    interface_columns,
    kv_excludes,
    page_columns,
    read_generator,
)
from sphinxext_attn.page.generator import read_page_text
from sphinxext_attn.page.prefill import read_prefill
from sphinxext_attn.page.priorities import page_priorities, read_priorities
from sphinxext_attn.page.variants import expand_variants, flash_attn_facts, flashinfer_facts
from sphinxext_attn.page.version import read_version
from sphinxext_attn.parallel import forked
from sphinxext_attn.source.classes import ClassFinder, ClassRef
from sphinxext_attn.source.registry import RegistryEntry, read_registry
from sphinxext_attn.source.tree import SourceTree

if TYPE_CHECKING:
    from sphinxext_attn.analysis.unit_runner import UnitStore
    from sphinxext_attn.parallel.forked import Forked


def analyze(
    key: AnalysisKey | str | os.PathLike[str],
    *,
    profile: str = "runtime",
    environment: Environment = REFERENCE,
    source: SourceTree | None = None,
    parallel: bool = False,
    store: UnitStore | None = None,
    known: Analysis | None = None,
    keep: list[object] | None = None,
) -> Analysis:
    """The one place an :class:`Analysis` is assembled: the tables of either profile,
    or another platform's part of a page, as ``key`` asks. A bare root stands for
    ``AnalysisKey(root, profile, environment)``. Never raises for problems in the
    tree: they are returned as diagnostics.

    How it runs never changes the answer: ``source`` is the tree to read through (its
    bytes are the evaluator's too; kept parsed after the call), ``parallel`` (the
    command line) splits the runtime profile's classes over two processes (see
    :mod:`.units`) or, in the ``vllm-page`` profile with a core to spare,
    syntax-checks the backend files in a forked process; ``store`` keeps the runtime
    profile's units between runs; ``known`` is a fresh analysis of the same platform
    whose selection is reused; ``keep`` receives the objects the caller keeps alive
    (the command line exits without freeing the parsed files).

    The cyclic garbage collector is paused meanwhile: the cached ASTs are
    millions of acyclic objects it would otherwise rescan on every parse.
    """
    if not isinstance(key, AnalysisKey):
        key = AnalysisKey(str(key), profile, environment)
    paused = gc.isenabled()
    gc.disable()
    try:
        tree = source if source is not None else SourceTree(key.root, plugins=key.plugins)
        if tree.plugins != key.plugins:
            raise ValueError(f"the tree given reads other plugins than {key!r} names")
        if keep is not None:
            keep.append(tree)
        if key.is_platform_part:
            # lazy: platform_part loads the evaluator, 163 ms after units (python -X
            # importtime, median of 7), which a run whose units are all kept never needs
            from sphinxext_attn.analysis.platform_part import platform_analysis

            return platform_analysis(key, tree, known)
        if key.profile != "runtime":
            result = _analyze(tree, page=True, parallel=parallel)
            result.profile = key.profile
            return result
        # lazy: the runtime profile's units load runtime/ and the evaluator's package,
        # which the vllm-page profile never needs (its cold run, median 171 -> 167 ms,
        # fastest 159 -> 153 ms: scripts/bench.py, 21 interleaved runs, vLLM 0.33.0);
        # called through the module, where tests replace it
        from sphinxext_attn.analysis import units

        result, runner = units.runtime_analysis(key, store=store, parallel=parallel, source=tree)
        if keep is not None:
            keep.append(runner)
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
    checking = _checked_in_child(tree, entries) if parallel else None
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
    clean = checking.result() if checking is not None else None
    tree.check_partly_parsed(clean if isinstance(clean, frozenset) else ())
    result.files = list(tree.files)
    result.directories = list(tree.directories)
    # reachable by the release's code, whatever lists vLLM's page shows
    reach = read_priorities(tree) if page else result.priorities
    result.diagnostics = unreachable_only(list(tree.diagnostics), reach)
    return result


def _checked_in_child(tree: SourceTree, entries: list[RegistryEntry]) -> Forked | None:
    """With a core to spare, a forked child syntax-checks every registered backend
    file whole while this process reads the tables (what the files it finds clean
    leave to check here: nothing, see :meth:`SourceTree.check_partly_parsed`).
    Without one, the rests are checked here at the end: the child's whole files
    are more work than the rests, and forking costs what it saves."""
    if not (forked.can_fork() and forked.spare_core()):
        return None
    modules = sorted({e.class_path.rpartition(".")[0] for e in entries if e.name not in SKIPPED})
    return forked.Forked(lambda: tree.clean_wholes(filter(None, map(tree.module_file, modules))))


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
