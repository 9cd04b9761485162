"""A safe evaluator of the Python subset vLLM's backend classes are written in."""

from sphinxext_attn.pyeval.interp import Interpreter
from sphinxext_attn.pyeval.values import Raised, Unknown

__all__ = ["Interpreter", "Raised", "Unknown"]
