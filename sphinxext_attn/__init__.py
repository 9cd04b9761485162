"""sphinxext-attn: vLLM attention-backend feature tables for Sphinx, by static analysis."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sphinxext_attn.version import __version__

__all__ = ["__version__", "setup"]

if TYPE_CHECKING:
    from sphinx.application import Sphinx


def setup(app: Sphinx) -> dict[str, Any]:
    """Sphinx entry point; the glue lives in :mod:`sphinxext_attn.sphinx`."""
    from sphinxext_attn.sphinx.setup import setup as _setup

    return _setup(app)
