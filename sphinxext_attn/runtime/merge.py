"""Turn a ``vllm-page`` analysis into the ``runtime`` profile's (see :mod:`.runtime`).

Two steps, so the command line can run them in two processes at once
(:mod:`.forked`): :func:`evaluate_runtime` asks every class its questions
(it needs no page analysis), :func:`merge_runtime` puts the answers into the
page analysis's rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sphinxext_attn.model.environment import REFERENCE, Environment
from sphinxext_attn.model.records import (
    Analysis,
    BackendFeatures,
    Diagnostic,
    Location,
    PriorityList,
)
from sphinxext_attn.page.backends import SKIPPED, model_family, unreachable_only
from sphinxext_attn.pyeval import Unknown
from sphinxext_attn.runtime.class_answers import BackendAnswer
from sphinxext_attn.runtime.rows import apply_facts, keep_for, new_row
from sphinxext_attn.source.registry import read_registry
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.vocab.paths import CUDA_PLATFORM_FILE


@dataclass
class RuntimeAnswers:
    """What the classes answered, per registered backend, in registry order
    (plain data: it crosses a process boundary)."""

    backends: list[BackendAnswer] = field(default_factory=list)
    priorities: list[PriorityList] = field(default_factory=list)
    priorities_unknown: Unknown | None = None
    files: list[str] = field(default_factory=list)
    directories: list[str] = field(default_factory=list)
    #: problems met in files only the evaluator read (a helper that does not parse)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def evaluate_runtime(
    tree: SourceTree,
    provenance: bool = True,
    extras: bool = True,
    environment: Environment = REFERENCE,
) -> RuntimeAnswers:
    """Ask every registered class (and the priority function) through one interpreter
    (``extras`` False: only the questions of the columns vLLM's page has)."""
    # lazy: the evaluator costs 105 ms after analysis.units, which imports this module
    # (python -X importtime, median of 7); a run whose units are all kept never needs it
    from sphinxext_attn.knowledge.machine import Machine
    from sphinxext_attn.pyeval import Interpreter
    from sphinxext_attn.runtime.priority_titles import safe_evaluated_priorities
    from sphinxext_attn.runtime.profile import RuntimeReader, resolve_class

    interp = Interpreter(tree, Machine(environment))
    reader = RuntimeReader(interp, provenance=provenance, extras=extras)
    answers = RuntimeAnswers()
    for entry in read_registry(tree):
        if entry.name in SKIPPED:
            continue
        cls = resolve_class(interp, entry)
        if cls is None:
            continue
        where = Location(cls.path, cls.node.lineno)
        answers.backends.append(BackendAnswer(entry, where, reader.safe_facts(entry, cls)))
    answers.priorities, answers.priorities_unknown = safe_evaluated_priorities(interp)
    answers.files = list(tree.files)
    answers.directories = list(tree.directories)
    answers.diagnostics = list(tree.diagnostics)
    return answers


def merge_runtime(analysis: Analysis, answers: RuntimeAnswers) -> None:
    """Replace each row's cells by the class's answers; add rows the page lacks."""
    by_name: dict[str, list[int]] = {}
    for i, row in enumerate(analysis.backends):
        by_name.setdefault(row.name, []).append(i)
    resolved: set[str] = set()
    added: list[BackendFeatures] = []
    for entry, where, facts in answers.backends:
        resolved.add(entry.name)
        if entry.name in by_name:
            for i in by_name[entry.name]:
                row = analysis.backends[i]
                analysis.backends[i] = apply_facts(row, facts, keep_for(row))
        else:
            is_mla = bool(facts.mla)
            added.append(new_row(entry, where, facts, model_family(entry, is_mla)))
        unknown = facts.unknown
        if unknown:
            column, reason = next(iter(unknown.items()))
            # Code outside the evaluated subset is how the release is written (info,
            # listed under the table); a body that exhausts a limit is hostile (warning).
            hostile = column in facts.limited
            analysis.diagnostics.append(
                Diagnostic(
                    f"{entry.name}: {len(unknown)} cell(s) not evaluated, e.g. {column}: {reason}",
                    where,
                    "unknown",
                    release=not hostile,
                )
            )
    analysis.backends.extend(added)
    why = answers.priorities_unknown
    if answers.priorities:
        analysis.priorities = answers.priorities
    elif why is not None:
        analysis.diagnostics.append(
            Diagnostic(
                f"priority lists not evaluated ({why.reason}); the literal lists are shown",
                Location(why.path or CUDA_PLATFORM_FILE, why.line or 0),
                "unknown",
                release=True,
            )
        )
    said = {(str(d.location), d.message) for d in analysis.diagnostics}
    analysis.diagnostics.extend(
        d for d in answers.diagnostics if (str(d.location), d.message) not in said
    )
    # Classes the page reader could not find but the evaluator built (by a call).
    analysis.diagnostics = [d for d in analysis.diagnostics if d.backend not in resolved]
    analysis.diagnostics = unreachable_only(analysis.diagnostics, analysis.priorities)
    analysis.files = list(dict.fromkeys([*analysis.files, *answers.files]))
    analysis.directories = list(dict.fromkeys([*analysis.directories, *answers.directories]))
