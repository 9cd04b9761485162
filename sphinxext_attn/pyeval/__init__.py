"""A safe evaluator of the Python subset vLLM's backend classes are written in.

Ask it through :meth:`Interpreter.question` (see :mod:`.question`): a question
has its own step budget and GPU, and a limit it hits is :class:`LimitExceeded`.

The names below are loaded on first use: a run that only reads answers kept
from an earlier one unpickles values of :mod:`.values` and never needs the
interpreter (importing it costs about as much as the rest of such a run).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter
    from sphinxext_attn.pyeval.question import (
        STEPS_PER_CELL,
        STEPS_PER_DECISION,
        STEPS_PER_PRIORITY_RUN,
        Question,
    )
    from sphinxext_attn.pyeval.values import LimitExceeded, Raised, Unknown
    from sphinxext_attn.pyeval.world import World

#: public name -> the submodule that defines it
_HOMES = {
    "Interpreter": "interp",
    "STEPS_PER_CELL": "question",
    "STEPS_PER_DECISION": "question",
    "STEPS_PER_PRIORITY_RUN": "question",
    "Question": "question",
    "LimitExceeded": "values",
    "Raised": "values",
    "Unknown": "values",
    "World": "world",
}

__all__ = [
    "STEPS_PER_CELL",
    "STEPS_PER_DECISION",
    "STEPS_PER_PRIORITY_RUN",
    "Interpreter",
    "LimitExceeded",
    "Question",
    "Raised",
    "Unknown",
    "World",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
