"""The ``runtime`` profile: every cell is what the backend class answers when asked.

The ``vllm-page`` analysis still decides which tables exist and how the
FlashAttention and FlashInfer variant rows split (their machine-dependent
cells stay as vLLM reasons about them); every other cell is replaced by the
evaluator's answer, and backends the page never shows (composites built by a
call) get rows of their own.
"""

from __future__ import annotations

import ast
from typing import Any

from sphinxext_attn.model.columns import ASKED, FLAGS
from sphinxext_attn.model.records import Location
from sphinxext_attn.pyeval import (
    NODE,
    Interpreter,
    LimitExceeded,
    PyClass,
    Raised,
    Unknown,
    class_mro,
)
from sphinxext_attn.runtime.accepts import narrow
from sphinxext_attn.runtime.block_sizes import block_facts, restrict_to_supported
from sphinxext_attn.runtime.class_answers import ClassAnswers
from sphinxext_attn.runtime.cudagraph import cudagraph_support
from sphinxext_attn.runtime.deciding_lines import deciding_lines
from sphinxext_attn.runtime.head_sizes import head_size_answer
from sphinxext_attn.runtime.kv_dtypes import declared_dtypes, ordered, selection_note
from sphinxext_attn.runtime.questions import (
    Answer,
    Asker,
    attention_types,
    dtype_values,
    kv_cache_dtypes,
)
from sphinxext_attn.source.registry import RegistryEntry
from sphinxext_attn.vocab.names import DTYPES


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
        if self.extras:  # last: the evaluator's caches keep every earlier answer as it was
            facts.cudagraph = cudagraph_support(self.interp, cls)
        narrow(self.interp, cls, facts)  # the full check, on the answers above
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
