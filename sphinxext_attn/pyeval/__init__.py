"""A safe evaluator of the Python subset backend classes are written in.

The front door: code outside the evaluator imports from here, never from its
modules. Make an :class:`Interpreter` of a tree and the :class:`World` the code
runs in (plain Python when none is given; a library's knowledge is a subclass
plugged in from outside, as ``knowledge.machine.Machine``), then ask it through
:meth:`Interpreter.question` (see :mod:`.question`): a question has its own
step budget and GPU; an answer is a :data:`Value`, :class:`Raised` when the code
raises, or :class:`Unknown` with a reason and a place (:class:`LimitExceeded`
when a limit was hit). Inside a question ``getattr``, ``call``, ``truth`` and
``iterate`` evaluate; ``facts_of`` names what the answer rests on.

The names below are loaded on first use: a run that only reads answers kept
from an earlier one unpickles values of :mod:`.values` and never needs the
interpreter (importing it costs about as much as the rest of such a run).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.abstract import AbstractInt, explore
    from sphinxext_attn.pyeval.abstract_str import AbstractStr, Concretize, explore_strings
    from sphinxext_attn.pyeval.interp import Interpreter
    from sphinxext_attn.pyeval.intsets import IntSet, Run
    from sphinxext_attn.pyeval.lazyclass import LazyBody, statements_for
    from sphinxext_attn.pyeval.members import class_mro, is_enum_member_name
    from sphinxext_attn.pyeval.objects import member_names
    from sphinxext_attn.pyeval.question import (
        STEPS_PER_CELL,
        STEPS_PER_DECISION,
        STEPS_PER_PRIORITY_RUN,
        Question,
    )
    from sphinxext_attn.pyeval.scope import MISSING, Frame, ModuleScope
    from sphinxext_attn.pyeval.statements import (
        LOG_METHODS,
        LOGGER_NAMES,
        NOT_EVALUATED,
        NotEvaluated,
    )
    from sphinxext_attn.pyeval.stdlib import LiteralType, label
    from sphinxext_attn.pyeval.values import (
        CAPABILITY,
        NODE,
        Bound,
        Builtin,
        EnumMember,
        External,
        Foreign,
        GpuInstance,
        Instance,
        LimitExceeded,
        PyClass,
        PyFunction,
        Raised,
        Return,
        Unknown,
        Value,
    )
    from sphinxext_attn.pyeval.world import World

#: public name -> the submodule that defines it
_HOMES = {
    # asking: the interpreter, its world, a question's budgets
    "Interpreter": "interp",
    "World": "world",
    "Question": "question",
    "STEPS_PER_CELL": "question",
    "STEPS_PER_DECISION": "question",
    "STEPS_PER_PRIORITY_RUN": "question",
    # answers: values of the analysed program, and the ways an evaluation stops
    "Value": "values",
    "Unknown": "values",
    "LimitExceeded": "values",
    "Raised": "values",
    "Return": "values",
    "NODE": "values",
    "CAPABILITY": "values",
    "MISSING": "scope",
    "Bound": "values",
    "Builtin": "values",
    "EnumMember": "values",
    "External": "values",
    "Foreign": "values",
    "Instance": "values",
    "GpuInstance": "values",
    "PyClass": "values",
    "PyFunction": "values",
    "LiteralType": "stdlib",
    "label": "stdlib",
    # classes and modules of the tree as the evaluator holds them
    "class_mro": "members",
    "is_enum_member_name": "members",
    "member_names": "objects",
    "statements_for": "lazyclass",
    "LazyBody": "lazyclass",
    "ModuleScope": "scope",
    "Frame": "scope",
    # what a checks body leaves unevaluated, and the logger calls a reason is read from
    "NOT_EVALUATED": "statements",
    "NotEvaluated": "statements",
    "LOG_METHODS": "statements",
    "LOGGER_NAMES": "statements",
    # head sizes: the abstract integer a rule is explored with
    "AbstractInt": "abstract",
    "explore": "abstract",
    "IntSet": "intsets",
    "Run": "intsets",
    # KV cache dtypes: the abstract string a question is asked with once per path
    "AbstractStr": "abstract_str",
    "Concretize": "abstract_str",
    "explore_strings": "abstract_str",
}

__all__ = [
    "AbstractInt",
    "AbstractStr",
    "Bound",
    "Builtin",
    "CAPABILITY",
    "Concretize",
    "EnumMember",
    "External",
    "Foreign",
    "Frame",
    "GpuInstance",
    "Instance",
    "IntSet",
    "Interpreter",
    "LOGGER_NAMES",
    "LOG_METHODS",
    "LazyBody",
    "LimitExceeded",
    "LiteralType",
    "MISSING",
    "ModuleScope",
    "NODE",
    "NOT_EVALUATED",
    "NotEvaluated",
    "PyClass",
    "PyFunction",
    "Question",
    "Raised",
    "Return",
    "Run",
    "STEPS_PER_CELL",
    "STEPS_PER_DECISION",
    "STEPS_PER_PRIORITY_RUN",
    "Unknown",
    "Value",
    "World",
    "class_mro",
    "explore",
    "explore_strings",
    "is_enum_member_name",
    "label",
    "member_names",
    "statements_for",
]


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
