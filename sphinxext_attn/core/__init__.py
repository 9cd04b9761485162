"""Sphinx-free analysis core: a vLLM source tree in, typed records out."""

from sphinxext_attn.core.analyze import analyze
from sphinxext_attn.core.models import (
    Analysis,
    BackendFeatures,
    Diagnostic,
    Footnote,
    Location,
    PrefillBackend,
    PriorityList,
)

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
