"""``python -m sphinxext_attn``."""

from sphinxext_attn.cli.main import run

run()
