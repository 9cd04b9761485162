"""The runtime profile as pieces of work (units) that each know the files they read.

A unit is one registry entry (its page row and what its class answers), the
rest of the page (literal priority lists, variants, prefill rows, version),
the evaluated priority lists, or one file's syntax check. Each runs on a
fresh class finder and interpreter under a :meth:`SourceTree.recording`, so
everything its result rests on is read, and recorded, inside it: a cache can
keep each result while those files are unchanged and, after an edit, ask
again only the units that read the edited file (as mypy's incremental mode
does). Assembling the units gives the analysis a single run gives: warnings
in the same order, said once; machine facts listed in first-read order.

The units of the backends are independent, so a first run splits them over
two processes (:mod:`.forked`); both parse each file once for the page reader
and the evaluator together. Without a store (or for a few units asked again)
the backends' answers share one interpreter, which evaluates the modules they
all read once (see :meth:`Runner.interpreter`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import cast

from sphinxext_attn.analysis.unit_runner import (
    Done,
    Kept,
    Runner,
    UnitStore,
    no_answer,
    nothing,
)
from sphinxext_attn.analysis.unit_values import (
    Answered,
    EvaluatedPriorities,
    PageHead,
    PageRest,
    PageRow,
)
from sphinxext_attn.model.columns import EXTRA_COLUMNS, OPTIONAL_COLUMNS
from sphinxext_attn.model.environment import Environment
from sphinxext_attn.model.key import AnalysisKey
from sphinxext_attn.model.records import Analysis, Diagnostic, Location
from sphinxext_attn.page.backends import EXTRA_FLAGS, SKIPPED, analyze_backend, unreachable_only
from sphinxext_attn.page.columns import (
    interface_columns,
    kv_excludes,
    page_columns,
    read_generator,
)
from sphinxext_attn.page.prefill import read_prefill
from sphinxext_attn.page.priorities import read_priorities
from sphinxext_attn.page.variants import expand_variants, flash_attn_facts, flashinfer_facts
from sphinxext_attn.page.version import read_version
from sphinxext_attn.parallel import forked
from sphinxext_attn.runtime.class_answers import BackendAnswer
from sphinxext_attn.runtime.merge import RuntimeAnswers, merge_runtime
from sphinxext_attn.runtime.rows import VARIANT_CELLS
from sphinxext_attn.source.classes import ClassFinder, ClassRef
from sphinxext_attn.source.registry import RegistryEntry, read_registry
from sphinxext_attn.source.syntax_check import Problem
from sphinxext_attn.source.tree import SourceTree

#: a backend's unit: its page row, and what its class answered (None: not built)
BackendDone = Done[PageRow, BackendAnswer | None]

#: Below this many backends to answer, forking costs more than it saves.
MIN_FORKED = 8
#: The parent's share of a forked first run's backends, in percent.
PARENT_SHARE = 30
#: Up to this many backends to answer again with a store, they share one interpreter
#: (a first run keeps each unit's own files, for the edits after it).
MAX_SHARED = 8


def _said_once(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Each warning once, first place first (as :meth:`SourceTree.warn` says them)."""
    seen: set[tuple[tuple[str, int] | None, str]] = set()
    out = []
    for diag in diagnostics:
        loc = diag.location
        key = ((loc.path, loc.line) if loc is not None else None, diag.message)
        if key not in seen:
            seen.add(key)
            out.append(diag)
    return out


def _head(tree: SourceTree) -> PageHead:
    if not tree.safe_path("vllm") or not (tree.root / "vllm").is_dir():
        tree.warn(f"no vllm/ package under {tree.root}", None, subtype="root")
    generator = read_generator(tree)
    return PageHead(
        kv_excludes(generator),
        page_columns(generator, []) if generator is not None else None,
        read_registry(tree),
    )


def _registry_again(tree: SourceTree) -> Answered[None]:
    read_registry(tree)  # the evaluator's own reading (its warnings)
    return Answered(None, [])


def _page_row(
    entry: RegistryEntry,
    excludes: dict[str, frozenset[str]] | None,
    provenance: bool,
    extras: bool,
) -> Callable[[SourceTree, BackendAnswer | None], PageRow]:
    """The backend's page row, reading literally only the cells its class's answers
    leave to it (see :func:`_left_to_page`); the interface's capability columns
    only where they are shown (``extras``)."""

    def work(tree: SourceTree, answers: BackendAnswer | None) -> PageRow:
        refs: list[ClassRef] = []
        answered = _answered(entry, answers, provenance, excludes is None)
        try:
            row = analyze_backend(tree, ClassFinder(tree), entry, refs, excludes, answered)
        except RecursionError:
            tree.warn(
                f"{entry.name}: expression nesting too deep", entry.location.path, subtype="syntax"
            )
            row = None
        return PageRow(row, interface_columns(tree, refs) if extras else ())

    return work


def _answered(
    entry: RegistryEntry, answers: BackendAnswer | None, provenance: bool, no_generator: bool
) -> frozenset[str]:
    """The columns of ``entry``'s row whose page reading the class's answers replace
    (:func:`~sphinxext_attn.runtime.rows.apply_facts`): every cell answered, with
    its place when places are shown (``provenance``), save those the variant rule
    keeps and, in a release without vLLM's generator, the optional columns (the
    page rows' own flags decide whether the page shows them, see
    :func:`~sphinxext_attn.page.columns.page_columns`); and the further capability
    flags. None where the class was not built."""
    if answers is None:
        return frozenset()
    facts = answers.facts
    kept = VARIANT_CELLS.get(entry.name, set())
    if no_generator:
        kept = kept | set(OPTIONAL_COLUMNS)
    done = {c for c, v in facts.cells.items() if v is not None and c not in kept}
    if provenance:
        done &= set(facts.sources)
    return frozenset({*done, EXTRA_FLAGS})


def _answers(
    entry: RegistryEntry, runner: Runner, provenance: bool, extras: bool
) -> Callable[[SourceTree], Answered[BackendAnswer | None]]:
    def work(tree: SourceTree) -> Answered[BackendAnswer | None]:
        # lazy: runtime.profile loads the evaluator, 105 ms after this module (python -X
        # importtime, median of 7), which a run whose units are all kept never needs
        from sphinxext_attn.runtime.profile import RuntimeReader, resolve_class

        interp = runner.interpreter()
        reader = RuntimeReader(interp, provenance=provenance, extras=extras)
        cls = resolve_class(interp, entry)
        if cls is None:
            return Answered(None, [])
        where = Location(cls.path, cls.node.lineno)
        facts = reader.safe_facts(entry, cls)
        return Answered(BackendAnswer(entry, where, facts), [f"{n}={v}" for n, v in interp.facts])

    return work


def _rest(entries: list[RegistryEntry], registered: set[str]) -> Callable[[SourceTree], PageRest]:
    def work(tree: SourceTree) -> PageRest:
        finder = ClassFinder(tree)
        priorities = read_priorities(tree)
        flash_attn = next((e for e in entries if e.name == "FLASH_ATTN"), None)
        fa_class = finder.resolve(flash_attn) if flash_attn else None
        fa = flash_attn_facts(tree, fa_class, "FLASH_ATTN" in registered)
        fi = flashinfer_facts(tree, "FLASHINFER" in registered)
        return PageRest(
            priorities, fa, fi, read_prefill(tree, finder, fa, False), read_version(tree)
        )

    return work


def _rest_unit(
    runner: Runner, entries: list[RegistryEntry], units: dict[str, BackendDone]
) -> Done[PageRest, None]:
    """The rest of the page: it depends on the backends only through which of those
    the variant rule splits have a row (``units``: at least those backends')."""
    flags = sorted(n for n in VARIANT_CELLS if n in units and units[n].page_value.row is not None)
    return runner.run(repr(("rest", flags)), _rest(entries, set(flags)), no_answer)


def _priorities(environment: Environment) -> Callable[[SourceTree], Answered[EvaluatedPriorities]]:
    def work(tree: SourceTree) -> Answered[EvaluatedPriorities]:
        # the evaluator is imported on first use: a run whose units are all kept
        # never loads it (tests/cli/test_incremental.py). Measured: importing it (with
        # runtime.profile, priority_titles) after this module costs 47-76 ms, median
        # 65 ms of 7 byte-compiled runs on this 2-core machine under load
        from sphinxext_attn.knowledge.machine import Machine
        from sphinxext_attn.pyeval import Interpreter
        from sphinxext_attn.runtime.priority_titles import safe_evaluated_priorities

        interp = Interpreter(tree, Machine(environment))
        lists, unknown = safe_evaluated_priorities(interp)
        return Answered(EvaluatedPriorities(lists, unknown), [f"{n}={v}" for n, v in interp.facts])

    return work


def _syntax(rel: str, start: int, length: int) -> Callable[[SourceTree], list[Problem]]:
    def work(tree: SourceTree) -> list[Problem]:
        return tree.rest_problems(rel, start, length)

    return work


def _syntax_key(rel: str, cut: tuple[int, int]) -> str:
    return repr(("syntax", rel, *cut))


#: a syntax check's unit: the problems of the rest of a file of which a class was parsed
CheckDone = Done[list[Problem], None]


def _checks_of(runner: Runner, done: Sequence[Kept]) -> dict[str, CheckDone]:
    """The syntax checks of the files of which ``done`` parsed a class only, each file
    checked once, with the last unit's cut (as the assembled run keys it), unless
    kept from an earlier run. A file a later unit parses whole, or cuts elsewhere,
    needs its check no more: it is done again or not at all (never stale)."""
    cuts: dict[str, tuple[int, int]] = {}
    whole: set[str] = set()
    for unit in done:
        cuts.update(unit.partly)
        whole.update(unit.whole)
    checks: dict[str, CheckDone] = {}
    for rel, cut in cuts.items():
        key = _syntax_key(rel, cut)
        if rel not in whole and runner.cached(key) is None:
            checks[key] = runner.compute(_syntax(rel, *cut), no_answer)
    return checks


def _with_checks(
    runner: Runner, done: list[BackendDone]
) -> tuple[list[BackendDone], dict[str, CheckDone]]:
    """The forked child's backends, with the syntax checks of their files (see
    :func:`_checks_of`; the parent keeps those it needs)."""
    return done, _checks_of(runner, done)


def runtime_analysis(
    key: AnalysisKey,
    store: UnitStore | None = None,
    parallel: bool = False,
    source: SourceTree | None = None,
) -> tuple[Analysis, Runner]:
    """The runtime profile's analysis ``key`` asks for, unit by unit (see the module).
    ``source``: the tree to read through (its bytes, e.g. edited in memory, are
    the evaluator's too)."""
    root, environment = key.root, key.environment
    provenance, extras = key.provenance, key.extras
    runner = Runner(root, environment, store, source, key.plugins)
    head = runner.run("head", _head, _registry_again)
    entries, excludes = head.page_value.entries, head.page_value.excludes
    todo = [e for e in entries if e.name not in SKIPPED]

    def key_of(entry: RegistryEntry) -> str:
        excluded = None if excludes is None else sorted(excludes.get(entry.name, ()))
        return repr(("backend", entry, excluded))

    def compute(entry: RegistryEntry) -> BackendDone:
        return runner.compute_answers_first(
            _page_row(entry, excludes, provenance, extras),
            _answers(entry, runner, provenance, extras),
        )

    units: dict[str, BackendDone] = {}
    missing = []
    for entry in todo:
        found = runner.cached(key_of(entry))
        if found is not None:
            units[entry.name] = cast(BackendDone, found)  # a key names one kind of unit
        else:
            missing.append(entry)
    # a first run without a store, or a few answers to ask again: one interpreter
    runner.shared = store is None or len(missing) <= MAX_SHARED
    forking = parallel and len(missing) > MIN_FORKED
    if forking:
        forking = forked.can_fork()
    # the modules every backend reads are evaluated once, before the fork: the
    # child inherits them with the shared interpreter
    warm = missing[:1] if forking and runner.shared else []
    for entry in warm:
        units[entry.name] = done = compute(entry)
        runner.keep(key_of(entry), done)
    missing = missing[len(warm) :]
    child = None
    #: syntax checks done while the child works, by either process (see below)
    checked_early: dict[str, CheckDone] = {}
    if forking:
        # neighbours in the registry read the same modules: each process takes a run
        # of them; the child the larger share (the parent has the rest of the page)
        cut = len(missing) * PARENT_SHARE // 100
        theirs = missing[cut:]
        child = forked.Forked(lambda: _with_checks(runner, [compute(e) for e in theirs]))
        missing = missing[:cut]
    for entry in missing:
        units[entry.name] = done = compute(entry)
        runner.keep(key_of(entry), done)
    prio = runner.run("priorities", nothing, _priorities(environment))
    rest: Done[PageRest, None] | None = None
    if child is not None:
        # while the child works: the rest of the page, when the backends it depends
        # on are this process's, and the syntax checks of this process's files
        ours: list[Kept] = [units[e.name] for e in [*warm, *missing]]
        if not any(e.name in VARIANT_CELLS for e in theirs):
            rest = _rest_unit(runner, entries, units)
            ours.append(rest)
        checked_early = _checks_of(runner, ours)
        got = child.result()
        if isinstance(got, tuple):
            checked_early.update(got[1])
        for i, entry in enumerate(theirs):
            done = got[0][i] if isinstance(got, tuple) else compute(entry)
            units[entry.name] = done
            runner.keep(key_of(entry), done)
    backends = [units[e.name] for e in todo]
    rows = [u.page_value.row for u in backends if u.page_value.row is not None]
    if rest is None:
        rest = _rest_unit(runner, entries, units)
    page_rest = rest.page_value

    partly: dict[str, tuple[int, int]] = {}
    whole: set[str] = set()
    for part in [head, *backends, rest]:
        partly.update(part.partly)
        whole.update(part.whole)
    checked = [rel for rel in sorted(partly) if rel not in whole]
    checks = []
    for rel in checked:
        unit = _syntax_key(rel, partly[rel])
        there = checked_early.get(unit)
        if there is not None:
            runner.keep(unit, there)
        checks.append(there or runner.run(unit, _syntax(rel, *partly[rel]), no_answer))

    result = Analysis(root=str(runner.page.root))
    result.priorities = page_rest.priorities
    result.backends, result.footnotes = expand_variants(rows, page_rest.fa, page_rest.fi)
    columns = head.page_value.columns
    result.page_columns = columns if columns is not None else page_columns(None, rows)
    declared = {c for u in backends for c in u.page_value.declared}
    result.capability_columns = tuple(c for c in EXTRA_COLUMNS if c in declared)
    result.mla_prefill = page_rest.prefill
    result.version = page_rest.version
    said = [*head.page, *(d for u in backends for d in u.page), *rest.page]
    for rel, check in zip(checked, checks, strict=True):
        said += [Diagnostic(m, Location(rel, line), "syntax") for m, line in check.page_value]
    result.diagnostics = unreachable_only(_said_once(said), result.priorities)
    every: list[Kept] = [head, *backends, rest, prio, *checks]
    paths = list(dict.fromkeys(p for done in every for p in done.paths))
    base = str(runner.page.root)
    result.files = [
        p for p in paths if not runner.page.is_foreign(p) and os.path.isfile(os.path.join(base, p))
    ]
    result.directories = list(dict.fromkeys(p.rpartition("/")[0] for p in paths))

    answers = RuntimeAnswers()
    answers.backends = [u.answer for u in backends if u.answer is not None]
    answers.priorities, answers.priorities_unknown = prio.answer
    answers.diagnostics = _said_once(
        [*head.evaluator, *(d for u in backends for d in u.evaluator), *prio.evaluator]
    )
    _order_facts(answers, [*backends, prio])
    merge_runtime(result, answers)
    result.profile = "runtime"
    return result, runner


def _order_facts(answers: RuntimeAnswers, units: list[Kept]) -> None:
    """Each cell's machine facts in the order one interpreter would have first read
    them: the units' own orders, merged in unit order."""
    order: dict[str, int] = {}
    for done in units:
        for fact in done.facts:
            order.setdefault(fact, len(order))
    for _, _, facts in answers.backends:
        for column, listed in facts.assumptions.items():
            facts.assumptions[column] = sorted(listed, key=lambda f: order.get(f, len(order)))
