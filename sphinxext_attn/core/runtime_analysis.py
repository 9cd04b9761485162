"""Turn a ``vllm-page`` analysis into the ``runtime`` profile's (see :mod:`.runtime`)."""

from __future__ import annotations

from sphinxext_attn.core.models import Analysis, BackendFeatures, Diagnostic, Location
from sphinxext_attn.core.priority_titles import safe_evaluated_priorities
from sphinxext_attn.core.pyeval import Interpreter
from sphinxext_attn.core.registry import read_registry
from sphinxext_attn.core.runtime import (
    RuntimeReader,
    apply_facts,
    keep_for,
    new_row,
    resolve_class,
)
from sphinxext_attn.core.source import SourceTree

#: Reasons that mean an evaluation limit was hit rather than unsupported code.
LIMIT_WORDS = ("budget", "too large", "too long", "too deeply", "in terms of itself")


def apply_runtime(tree: SourceTree, analysis: Analysis, provenance: bool = True) -> Interpreter:
    """Replace each row's cells by the class's answers; add rows the page lacks."""
    from sphinxext_attn.core.analyze import SKIPPED, model_family

    interp = Interpreter(tree)
    reader = RuntimeReader(interp, provenance=provenance)
    by_name: dict[str, list[int]] = {}
    for i, row in enumerate(analysis.backends):
        by_name.setdefault(row.name, []).append(i)
    resolved: set[str] = set()
    added: list[BackendFeatures] = []
    for entry in read_registry(tree):
        if entry.name in SKIPPED:
            continue
        cls = resolve_class(interp, entry)
        if cls is None:
            continue
        resolved.add(entry.name)
        facts = reader.facts(entry, cls)
        if entry.name in by_name:
            for i in by_name[entry.name]:
                row = analysis.backends[i]
                analysis.backends[i] = apply_facts(row, facts, keep_for(row))
        else:
            is_mla = bool(facts.get("MLA"))
            added.append(new_row(entry, cls, facts, model_family(entry, is_mla)))
        unknown = facts["unknown"]
        if unknown:
            column, reason = next(iter(unknown.items()))
            # Code outside the evaluated subset is how the release is written (info,
            # listed under the table); a body that exhausts a limit is hostile (warning).
            hostile = any(word in reason for word in LIMIT_WORDS)
            analysis.diagnostics.append(
                Diagnostic(
                    f"{entry.name}: {len(unknown)} cell(s) not evaluated, e.g. {column}: {reason}",
                    Location(cls.path, cls.node.lineno),
                    "unknown",
                    release=not hostile,
                )
            )
    analysis.backends.extend(added)
    lists, why = safe_evaluated_priorities(interp)
    if lists:
        analysis.priorities = lists
    elif why is not None:
        analysis.diagnostics.append(
            Diagnostic(
                f"priority lists not evaluated ({why.reason}); the literal lists are shown",
                Location(why.path or "vllm/platforms/cuda.py", why.line or 0),
                "unknown",
                release=True,
            )
        )
    # Classes the page reader could not find but the evaluator built (by a call).
    analysis.diagnostics = [d for d in analysis.diagnostics if d.backend not in resolved]
    analysis.files = list(dict.fromkeys([*analysis.files, *tree.files]))
    analysis.directories = list(dict.fromkeys([*analysis.directories, *tree.directories]))
    return interp
