"""vLLM's ``--8<-- "gen:KEY"`` markers: where its docs build inserts generated tables.

From vLLM 0.27 on, ``docs/design/attention_backends.md`` is written by hand and
holds these markers; ``mkdocs build`` replaces each with a block its generator
makes, and fails on a marker it does not fill or a block whose marker is
missing. Such a page must never be rewritten by a hook: the markers are its
content.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

MARKER = '--8<-- "gen:{key}"'
ANY_MARKER = re.compile(r'--8<-- "gen:([^"]*)"')


class MarkerError(ValueError):
    """A page whose markers do not match the blocks its generator fills."""


def marker(key: str) -> str:
    return MARKER.format(key=key)


def marker_keys(text: str) -> list[str]:
    """The keys of the markers a page holds, in page order (each once)."""
    return list(dict.fromkeys(ANY_MARKER.findall(text)))


def has_markers(text: str) -> bool:
    return ANY_MARKER.search(text) is not None


def marker_problems(text: str, filled: Iterable[str]) -> list[str]:
    """What vLLM's docs build would reject: a marker its generator fills that the
    page lacks, or a marker of the page that nothing fills."""
    keys = list(filled)
    problems = [f"missing marker {marker(k)}" for k in keys if marker(k) not in text]
    problems += [
        f"unsubstituted marker {marker(k)} (its generator fills no such block)"
        for k in marker_keys(text)
        if k not in keys
    ]
    return problems


def fill(text: str, blocks: Mapping[str, str]) -> str:
    """The page with each marker replaced by its block, as vLLM's docs build does."""
    problems = marker_problems(text, blocks)
    if problems:
        raise MarkerError("; ".join(problems))
    for key, block in blocks.items():
        text = text.replace(marker(key), block)
    return text
