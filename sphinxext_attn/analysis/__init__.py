"""Sphinx-free analysis core: a vLLM source tree in, typed records out.

``analyze`` is imported on first use: the records alone (a run answered from
its cache, the renderers) need none of the analysis modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sphinxext_attn.model.records import (
    Analysis,
    BackendFeatures,
    Diagnostic,
    Footnote,
    Location,
    PrefillBackend,
    PriorityList,
)

if TYPE_CHECKING:
    from sphinxext_attn.analysis.pipeline import analyze

__all__ = [
    "Analysis",
    "BackendFeatures",
    "Diagnostic",
    "Footnote",
    "Location",
    "PrefillBackend",
    "PriorityList",
    "analyze",
]


def __getattr__(name: str) -> object:
    if name == "analyze":
        # lazy: a kept run given --plugin loads this package for plugin_release, and the
        # pipeline would add 23 ms to it (python -X importtime, median of 7 runs)
        from sphinxext_attn.analysis.pipeline import analyze

        return analyze
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
