"""The command line (``sphinxext-attn``, ``python -m sphinxext_attn``)."""

from sphinxext_attn.cli.main import main, run

__all__ = ["main", "run"]
