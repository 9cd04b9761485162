"""``python -m sphinxext_attn``."""

from sphinxext_attn.cli import run

run()
