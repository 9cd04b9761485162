"""What each unit of the runtime profile returns (see :mod:`.units`), by name.

A unit's page work and evaluator work each give one of these records; a
:class:`~.unit_runner.Done` keeps them as :attr:`~.unit_runner.Done.page_value`
and :attr:`~.unit_runner.Done.answer`. Plain data: they cross a process
boundary and are kept in the run cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, NamedTuple, TypeVar

from sphinxext_attn.model.records import BackendFeatures, PrefillBackend, PriorityList
from sphinxext_attn.source.registry import RegistryEntry

if TYPE_CHECKING:
    from sphinxext_attn.page.variants import FlashAttnFacts, FlashInferFacts
    from sphinxext_attn.pyeval import Unknown

A = TypeVar("A")


class Answered(NamedTuple, Generic[A]):
    """An evaluator work's answer and the machine facts it read (``NAME=VALUE``, in
    the order first read)."""

    value: A
    facts: list[str]


class PageHead(NamedTuple):
    """The registry and what vLLM's own page generator says (the ``head`` unit)."""

    #: KV dtypes the generator leaves out per backend (None: no generator)
    excludes: dict[str, frozenset[str]] | None
    #: the optional columns the generator shows (None: no generator)
    columns: tuple[str, ...] | None
    entries: list[RegistryEntry]


class PageRow(NamedTuple):
    """A backend's page row (None: not built) and the capability columns its
    interface declares (empty where they are not shown)."""

    row: BackendFeatures | None
    declared: tuple[str, ...]


class PageRest(NamedTuple):
    """The rest of the page: literal priority lists, variants, MLA prefill, version."""

    priorities: list[PriorityList]
    fa: FlashAttnFacts | None
    fi: FlashInferFacts | None
    prefill: list[PrefillBackend]
    version: str | None


class EvaluatedPriorities(NamedTuple):
    """The priority lists as the evaluated priority function gives them, or why not."""

    lists: list[PriorityList]
    unknown: Unknown | None
