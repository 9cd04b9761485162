"""Another platform's part of a page, as an :class:`Analysis` of its own.

A page asks for exactly what it shows: ``bare`` (the release and nothing
evaluated: a select directive, which asks its own questions), ``lists`` (the
platform's lists or rules, and the GPUs each reachable backend accepts: the
priority directive) or ``features`` (those, and a feature row per reachable
backend, asked on the platform's machine: the feature tables and the page's
platform section). Being an :class:`Analysis` (``profile`` ``platform:WHAT``),
it is kept, fingerprinted and invalidated like the CUDA analysis, by the files
it read; the CUDA analysis is never run for it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.environment import Environment
from sphinxext_attn.model.key import AnalysisKey
from sphinxext_attn.model.platform import PlatformSelection
from sphinxext_attn.model.records import Analysis, BackendFeatures, Location
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.selection.platforms import evaluate_selection
from sphinxext_attn.source.tree import SourceTree


def platform_analysis(
    key: AnalysisKey, tree: SourceTree, known: Analysis | None = None
) -> Analysis:
    """The platform's part of a page (``key.part``: see the module's docstring).
    ``known``: a fresh analysis of the same platform that holds its selection
    already (the lists a page's priority directive explored), reused with its files."""
    from sphinxext_attn.page.columns import page_columns, read_generator
    from sphinxext_attn.page.version import read_version

    environment = key.environment
    out = Analysis(root=key.root, version=read_version(tree), profile=key.analysis_profile)
    if key.part != "bare":
        found = known.platform if known is not None else None
        selection = found if found is not None else evaluate_selection(tree, environment)
        out.platform = selection
        out.priorities = list(selection.lists)
        if key.part == "features" and not selection.error:
            out.backends = platform_rows(tree, environment, selection)
            out.page_columns = page_columns(read_generator(tree), out.backends)
    before = known if known is not None else Analysis(root=key.root)
    out.files = list(dict.fromkeys([*before.files, *tree.files]))
    out.directories = list(dict.fromkeys([*before.directories, *tree.directories]))
    out.diagnostics = list(dict.fromkeys([*before.diagnostics, *tree.diagnostics]))
    return out


def platform_rows(
    tree: SourceTree, environment: Environment, selection: PlatformSelection
) -> list[BackendFeatures]:
    """A row per backend the platform's selection reaches, each cell what the class
    answers on that platform's machine; the capability is the platform's: the GPUs
    (arch names) a ROCm backend accepts, ``N/A`` where the rules ask none."""
    from sphinxext_attn.page.backends import model_family
    from sphinxext_attn.runtime.declared import builder_cudagraph, note_undeclared, undeclared
    from sphinxext_attn.runtime.profile import RuntimeReader, resolve_class
    from sphinxext_attn.runtime.rows import new_row
    from sphinxext_attn.selection.plugin_checks import check_plugin_modules, readable_class
    from sphinxext_attn.selection.plugin_rows import reached_entries, reached_for_mla_only
    from sphinxext_attn.source.registry import read_registry

    interp = Interpreter(tree, Machine(environment))
    reader = RuntimeReader(interp, provenance=False, extras=False)
    rows: list[BackendFeatures] = []
    for entry in reached_entries(interp, selection, read_registry(tree)):
        if not readable_class(interp, entry):
            continue
        cls = resolve_class(interp, entry)
        if cls is None:
            continue
        facts = reader.safe_facts(entry, cls)
        row = new_row(entry, Location(cls.path, cls.node.lineno), facts, "")
        if not row.is_mla and reached_for_mla_only(selection, entry.name):
            row = dataclasses.replace(row, is_mla=True)
        row = dataclasses.replace(row, family=model_family(entry, row.is_mla))
        row = note_undeclared(row, undeclared(interp, cls, row))
        if cls.path.split("/", 1)[0] in tree.plugin_roots:
            row = dataclasses.replace(row, cudagraph_support=builder_cudagraph(interp, cls))
        rows.append(_platform_capability(row, selection.gpus.get(entry.name)))
    if tree.plugin_roots:
        check_plugin_modules(interp)
    return rows


def _platform_capability(row: BackendFeatures, gpus: list[str] | None) -> BackendFeatures:
    supports: dict[str, Any] = {
        k: v for k, v in row.supports.items() if k != "compute_capabilities"
    }
    unknown = {k: v for k, v in row.unknown.items() if k != "Compute Cap."}
    assumptions = {k: v for k, v in row.assumptions.items() if k != "Compute Cap."}
    if gpus is None:  # the platform's rules ask no capability (XPU, CPU)
        text = "N/A"
    else:
        text = "Any" if gpus == ["any"] else ", ".join(gpus) or "None"
        supports["gpus"] = "any" if gpus == ["any"] else list(gpus)
    return dataclasses.replace(
        row, compute_capability=text, supports=supports, unknown=unknown, assumptions=assumptions
    )
