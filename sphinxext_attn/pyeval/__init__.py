"""A safe evaluator of the Python subset vLLM's backend classes are written in.

Ask it through :meth:`Interpreter.question` (see :mod:`.question`): a question
has its own step budget and GPU, and a limit it hits is :class:`LimitExceeded`.
"""

from sphinxext_attn.pyeval.interp import Interpreter
from sphinxext_attn.pyeval.question import (
    STEPS_PER_CELL,
    STEPS_PER_DECISION,
    STEPS_PER_PRIORITY_RUN,
    Question,
)
from sphinxext_attn.pyeval.values import LimitExceeded, Raised, Unknown

__all__ = [
    "STEPS_PER_CELL",
    "STEPS_PER_DECISION",
    "STEPS_PER_PRIORITY_RUN",
    "Interpreter",
    "LimitExceeded",
    "Question",
    "Raised",
    "Unknown",
]
