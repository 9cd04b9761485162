"""Demo stand-in for a vLLM source tree (never imported by sphinxext-attn)."""

__version__ = "0.0.0+demo"
