"""The ``runtime`` profile: every cell is what the backend class answers when asked.

The ``vllm-page`` analysis still decides which tables exist and how the
FlashAttention and FlashInfer variant rows split (their machine-dependent
cells stay as vLLM reasons about them); every other cell is replaced by the
evaluator's answer, and backends the page never shows (composites built by a
call) get rows of their own.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any

from sphinxext_attn.model.columns import ASKED, FLAGS
from sphinxext_attn.model.records import BackendFeatures, Location
from sphinxext_attn.pyeval import Interpreter, LimitExceeded, Raised, Unknown
from sphinxext_attn.pyeval.values import NODE, PyClass
from sphinxext_attn.runtime.block_sizes import block_facts, per_gpu_labels, restrict_to_supported
from sphinxext_attn.runtime.class_answers import ClassAnswers
from sphinxext_attn.runtime.deciding_lines import deciding_lines
from sphinxext_attn.runtime.head_sizes import head_size_answer, head_size_text
from sphinxext_attn.runtime.kv_dtypes import declared_dtypes, ordered, selection_note
from sphinxext_attn.runtime.questions import (
    Answer,
    Asker,
    attention_types,
    dtype_values,
    kv_cache_dtypes,
)
from sphinxext_attn.source.registry import RegistryEntry
from sphinxext_attn.vocab.names import ATTN_TYPE_NAMES, CAPABILITIES, DTYPES, SCORED_CAPABILITIES

#: Cells of the variant rows that depend on the FlashAttention version or the
#: TRTLLM kernels present: kept as the variant rule reads them.
VARIANT_CELLS = {
    "FLASH_ATTN": {"Sink", "KV Dtypes", "Head Sizes", "Compute Cap."},
    "FLASHINFER": {"Sink", "Block Sizes", "KV Dtypes", "Compute Cap."},
}


def resolve_class(interp: Interpreter, entry: RegistryEntry) -> PyClass | None:
    module_name, _, name = entry.class_path.rpartition(".")
    try:
        with interp.guarded():
            module = interp.module(module_name)
            if module is None:
                return None
            value = interp.module_attr(module, name, NODE)
    except (Unknown, Raised):
        return None
    return value if isinstance(value, PyClass) else None


def capability_text(
    caps: list[tuple[int, int]], told: list[tuple[int, int]] | tuple[tuple[int, int], ...] = ()
) -> str:
    """``[(8, 0), ..., (12, 1)]`` -> ``≥8.0``; families as ``9.x``; else each one.
    ``told``: every capability the check was asked on (the grid and those the
    code names), over which the text is exact; default the grid."""
    points = sorted(set(told or CAPABILITIES) | set(caps))
    chosen = set(caps)
    if chosen == set(points):
        return "Any"
    if not chosen:
        return "None"
    first = min(chosen)
    if chosen == {c for c in points if c >= first}:
        return f"≥{first[0]}.{first[1]}"
    parts: list[str] = []
    for major in sorted({c[0] for c in chosen}):
        family = [c for c in points if c[0] == major]
        picked = [c for c in family if c in chosen]
        if picked == family:
            parts.append(f"{major}.x")
        else:
            parts.extend(f"{a}.{b}" for a, b in picked)
    return ", ".join(parts)


def _reason(answer: Answer) -> str:
    assert answer.unknown is not None
    return str(answer.unknown)


class RuntimeReader:
    """Asks each registered class its questions once and builds its row."""

    def __init__(self, interp: Interpreter, provenance: bool = True, extras: bool = True) -> None:
        self.interp = interp
        self.kv_dtypes = list(kv_cache_dtypes(interp))
        #: find the line deciding each cell (source links, tooltips, JSON)
        self.provenance = provenance
        #: ask the capabilities outside vLLM's page too (JSON, ``:columns:``)
        self.extras = extras

    def safe_facts(self, entry: RegistryEntry, cls: PyClass) -> ClassAnswers:
        """:meth:`facts`, or, when the class itself cannot be evaluated (its base
        class does not parse, ...), every cell unknown with the reason and place."""
        try:
            with self.interp.guarded((cls.path, cls.node.lineno)):
                return self.facts(entry, cls)
        except (Unknown, Raised) as exc:
            columns = [*(c.title for c in ASKED), "MLA"]
            return ClassAnswers.not_evaluated(columns, str(exc), isinstance(exc, LimitExceeded))

    def facts(self, entry: RegistryEntry, cls: PyClass) -> ClassAnswers:
        """Every answer of one backend (see :class:`ClassAnswers`)."""
        ask = Asker(self.interp, cls)
        facts = ClassAnswers()
        cells = facts.cells

        def take(column: str, answer: Answer) -> Any:
            assumed = ask.assumed()
            if assumed:
                facts.assumptions[column] = assumed
            if answer.unknown is not None:
                facts.unknown[column] = _reason(answer)
                if isinstance(answer.unknown, LimitExceeded):
                    facts.limited.append(column)
                return None
            if answer.raised:
                facts.unknown[column] = f"the class raises {answer.raised}"
                return None
            return answer.value

        labels = [label for label, _ in DTYPES]
        cells["Dtypes"] = take("Dtypes", ask.ask_each("supports_dtype", dtype_values(), labels))
        kv_declared_at = self.kv_cell(ask, cls, facts, take)
        answer = ask.ask("get_supported_kernel_block_sizes")
        block_facts(answer, take("Block Sizes", answer), facts)
        cells["Head Sizes"] = take("Head Sizes", head_size_answer(ask))
        answer = ask.capabilities()
        facts.capability_points = list(answer.capabilities)
        cells["Compute Cap."] = take("Compute Cap.", answer)
        restrict_to_supported(facts)
        kinds = attention_types(self.interp, cls)
        types = take(
            "Attention Types",
            ask.ask_each("supports_attn_type", [v for _, v in kinds], [n for n, _ in kinds]),
        )
        cells["Attention Types"] = types
        interface = self.interface(cls)
        declared = {f.name for f in interface}
        for flag in FLAGS:
            answer = ask.ask_flag(flag.question)
            if answer.raised.startswith("AttributeError"):
                if flag.impl_attribute:
                    answer = ask.ask_impl_flag(flag.impl_attribute)
                elif flag.question not in declared:  # the release has no such question
                    cells[flag.title] = None
                    continue
            cells[flag.title] = take(flag.title, answer)
        facts.mla = take("MLA", ask.ask_flag("is_mla"))
        for method in extra_methods(interface) if self.extras else []:
            facts.extras[method] = take(method, ask.ask_flag(method))
        if self.provenance:
            facts.sources = deciding_lines(self.interp, cls, facts)
            if kv_declared_at is not None:
                facts.sources["KV Dtypes"] = kv_declared_at
        return facts

    def kv_cell(self, ask: Asker, cls: PyClass, facts: ClassAnswers, take: Any) -> Location | None:
        """KV Dtypes: the declared list, with a note where the selection's check
        accepts a different set (:mod:`sphinxext_attn.runtime.kv_dtypes`); the
        declaration's place when the note says so (it is then the cell's source)."""
        answer = ask.ask_each("supports_kv_cache_dtype", self.kv_dtypes, self.kv_dtypes)
        declared = declared_dtypes(self.interp, cls)
        if declared is None:
            facts.cells["KV Dtypes"] = take("KV Dtypes", answer)
            return None
        assumed = ask.assumed()
        facts.cells["KV Dtypes"] = ordered(declared.dtypes, self.kv_dtypes)
        accepted = None if answer.unknown or answer.raised else answer.value
        note = selection_note(
            declared.dtypes,
            accepted,
            unknown=str(answer.unknown) if answer.unknown else "",
            raised=answer.raised,
            by_gpu=answer.by_capability,
            assumed=assumed,
        )
        if not note:
            return None
        facts.notes["KV Dtypes"] = note
        return declared.where

    def interface(self, cls: PyClass) -> list[ast.FunctionDef]:
        """The methods of the release's backend interface: those of the root
        class of ``cls`` (``AttentionBackend``). A question it lacks is one
        vLLM of that release never asks: a class without it is no unknown."""
        from sphinxext_attn.pyeval.members import class_mro

        mro = [c for c in class_mro(cls, self.interp) if isinstance(c, PyClass)]
        return [s for s in mro[-1].node.body if isinstance(s, ast.FunctionDef)]


def extra_methods(interface: list[ast.FunctionDef]) -> list[str]:
    """Capability flags the release's backend interface declares (no-argument
    ``supports_*`` classmethods of the root backend class)."""
    return [
        stmt.name
        for stmt in interface
        if stmt.name.startswith("supports_")
        and len(stmt.args.args) == 1
        and not stmt.args.vararg
        and stmt.name not in {flag.question for flag in FLAGS}
    ]


def apply_facts(row: BackendFeatures, facts: ClassAnswers, keep: set[str]) -> BackendFeatures:
    """The row with its evaluated cells (``keep``: columns the variant rule decides)."""
    changes: dict[str, Any] = {}
    cells = facts.cells
    unknown = {k: v for k, v in facts.unknown.items() if k not in keep}
    supports: dict[str, Any] = {}
    if "Dtypes" not in keep and cells.get("Dtypes") is not None:
        changes["dtypes"] = tuple(cells["Dtypes"])
    if "KV Dtypes" not in keep and cells.get("KV Dtypes") is not None:
        changes["kv_cache_dtypes"] = tuple(cells["KV Dtypes"])
    blocks = cells.get("Block Sizes")
    if "Block Sizes" not in keep and blocks is not None:
        labels = [b for b in blocks if b != "%1"] if "%1" not in blocks else []
        by_gpu = facts.blocks_by_gpu
        if by_gpu and labels:
            labels = per_gpu_labels(by_gpu, labels)
            supports["block_sizes_by_capability"] = {
                f"{a}.{b}": list(v)
                for (a, b), v in by_gpu.items()
                if (a, b) in SCORED_CAPABILITIES
            }
        changes["block_sizes"] = tuple(labels)
        supports["block_sizes"] = "any" if "%1" in blocks or not blocks else list(blocks)
    if "Head Sizes" not in keep and cells.get("Head Sizes") is not None:
        changes["head_sizes"] = head_size_text(cells["Head Sizes"])
        supports["head_sizes"] = cells["Head Sizes"]
    caps = cells.get("Compute Cap.")
    if "Compute Cap." not in keep and caps is not None and row.compute_capability != "N/A":
        told = facts.capability_points or CAPABILITIES
        changes["compute_capability"] = capability_text(caps, told)
        supports["compute_capabilities"] = (
            "any"
            if set(caps) == set(told)
            else [f"{a}.{b}" for a, b in caps if (a, b) in SCORED_CAPABILITIES]
        )
    if cells.get("Attention Types") is not None:
        names = [ATTN_TYPE_NAMES.get(n, n) for n in cells["Attention Types"]]
        every = set(ATTN_TYPE_NAMES.values())
        changes["attn_types"] = (
            "All" if set(names) >= every else ", ".join(sorted(names)) or "None"
        )
    for flag in FLAGS:
        if flag.title not in keep and cells.get(flag.title) is not None:
            changes[flag.field] = bool(cells[flag.title])
    sources = dict(row.sources)
    sources.update((c, loc) for c, loc in facts.sources.items() if c not in keep)
    return replace(
        row,
        **changes,
        unknown=unknown,
        supports=supports,
        extras=dict(facts.extras),
        sources=sources,
        assumptions={c: tuple(v) for c, v in facts.assumptions.items() if c not in keep},
        notes={c: v for c, v in facts.notes.items() if c not in keep},
    )


def new_row(
    entry: RegistryEntry, where: Location, facts: ClassAnswers, family: str
) -> BackendFeatures:
    """A row for a backend the page analysis has none for (a composite)."""
    row = BackendFeatures(
        name=entry.name,
        class_path=entry.class_path,
        is_mla=bool(facts.mla),
        family=family,
        sources={"Backend": where},
    )
    return apply_facts(row, facts, set())


def keep_for(row: BackendFeatures) -> set[str]:
    return VARIANT_CELLS.get(row.name, set()) if row.version else set()
