"""sphinxext-attn: vLLM attention-backend feature tables for Sphinx, by static analysis."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sphinxext_attn.version import __version__

__all__ = ["__version__", "setup"]

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.util.typing import ExtensionMetadata


def setup(app: Sphinx) -> ExtensionMetadata:
    """Sphinx entry point; the glue lives in :mod:`sphinxext_attn.sphinx`."""
    # lazy: every command-line run imports this package, and Sphinx with the glue
    # costs 445 ms (python -X importtime, median of 7)
    from sphinxext_attn.sphinx.setup import setup as _setup

    return _setup(app)
