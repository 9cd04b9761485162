"""The layout and words of a release's own page, as its generator writes them.

Plain data (read by :mod:`sphinxext_attn.page.generator`), kept with the other
records so that an analysis loaded from the cache needs no reader module.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class PageNote:
    """A footnote the generator writes: its marker and its lines (without ``> ``)."""

    marker: str
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@dataclass(frozen=True)
class PageText:
    """The layout and words of one release's page, from its generator."""

    #: table rules written ``| --- |`` (else ``|---|``, the seed's)
    spaced_rules: bool = False
    #: rows pass through ``.replace("  ", " ")`` (an empty cell is ``| |``)
    single_spaced: bool = False
    #: heading line -> the first paragraph under it
    paragraphs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: footnotes under the priority lists, under the prefill table, and the others
    priority_notes: tuple[PageNote, ...] = ()
    prefill_notes: tuple[PageNote, ...] = ()
    table_notes: tuple[PageNote, ...] = ()
    #: (category, arch) -> backend -> the text after its name in that priority list
    annotations: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    #: the ``gen:`` keys the generator fills (a marker page from vLLM 0.27 on)
    marker_keys: tuple[str, ...] = ()

    def table_note(self, marker: str) -> PageNote | None:
        return next((n for n in self.table_notes if n.marker == marker), None)
