"""What one backend class answered: the record the runtime reader fills and every
later step reads (the row builder, the merge's warnings, the source lines).

Plain data: it crosses a process boundary and is kept in the run cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from sphinxext_attn.model.records import CudagraphAnswer, Location
from sphinxext_attn.source.registry import RegistryEntry

Capability = tuple[int, int]


@dataclass
class ClassAnswers:
    """One backend class's answers, by the column titles of :mod:`sphinxext_attn.model.columns`."""

    #: column -> the answer (None: not evaluated, or a question the release never asks)
    cells: dict[str, Any] = field(default_factory=dict)
    #: ``is_mla()`` (None: not evaluated)
    mla: Any = None
    #: column (or ``MLA``, or an extra's question) -> why it was not evaluated, in the
    #: order asked
    unknown: dict[str, str] = field(default_factory=dict)
    #: the columns whose unknown is a limit hit (a hostile body: a warning, not a note)
    limited: list[str] = field(default_factory=list)
    #: further capabilities (``supports_*`` question -> its answer, None: not evaluated)
    extras: dict[str, Any] = field(default_factory=dict)
    #: column -> the machine facts its answer rests on (``NAME=VALUE``)
    assumptions: dict[str, list[str]] = field(default_factory=dict)
    #: column -> a note on the cell (where the selection's check differs)
    notes: dict[str, str] = field(default_factory=dict)
    #: column -> the line that decides it
    sources: dict[str, Location] = field(default_factory=dict)
    #: every capability the Compute Cap. check was asked on (empty: the grid)
    capability_points: list[Capability] = field(default_factory=list)
    #: GPU -> block size labels, where the class picks by GPU and the GPUs it supports
    #: differ (None: one answer for every GPU)
    blocks_by_gpu: dict[Capability, list[str]] | None = None
    #: the metadata builder's CUDA-graph support (see :mod:`.cudagraph`; empty: not asked)
    cudagraph: CudagraphAnswer = field(default_factory=lambda: CudagraphAnswer())
    #: column -> the values vLLM's full check accepts, where it refuses some the
    #: column's own method admits (see :mod:`.accepts`; absent: the same values)
    accepts: dict[str, Any] = field(default_factory=dict)
    #: column -> why what the full check accepts was not found
    accepts_unknown: dict[str, str] = field(default_factory=dict)

    @classmethod
    def not_evaluated(cls, columns: list[str], reason: str, limited: bool) -> ClassAnswers:
        """Every one of ``columns`` unknown for ``reason`` (the class itself cannot be
        evaluated); ``limited``: the reason is a limit hit."""
        return cls(
            unknown=dict.fromkeys(columns, reason),
            limited=list(columns) if limited else [],
        )


class BackendAnswer(NamedTuple):
    """A registered backend's class and what it answered (a runtime unit's answer)."""

    entry: RegistryEntry
    #: where the class is defined
    where: Location
    facts: ClassAnswers
