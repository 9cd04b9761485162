"""Formatting in the evaluated subset: f-string fields, format specs and
``str.join``, each with its size checked before the text is built (the limits of
:mod:`.ops`: a field of width ``10**9`` is unknown, not a gigabyte).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sphinxext_attn.pyeval.abstract_str import concretize
from sphinxext_attn.pyeval.ops import MAX_ITEMS, SCALARS, paid, torch_symbol, weigh
from sphinxext_attn.pyeval.values import (
    Budget,
    Caught,
    External,
    Instance,
    LimitExceeded,
    PyClass,
    Unknown,
    Value,
)

#: The ``!r``, ``!s`` and ``!a`` of an f-string field.
CONVERSIONS: dict[int, Callable[[object], str]] = {ord("r"): repr, ord("s"): str, ord("a"): ascii}


_SPEC = re.compile(r"(?:.?[<>=^])?[-+ ]?z?#?0?(\d*)[,_]?(?:\.(\d+))?[a-zA-Z%]?", re.S)


def format_spec(spec: str, where: tuple[str, int]) -> str:
    """A format spec whose width and precision are checked before formatting (an
    f-string's spec is itself an f-string: always a str)."""
    match = _SPEC.fullmatch(spec)
    if match is None:
        raise Unknown("format spec not evaluated", *where)
    for digits in match.groups():
        if digits and (len(digits) > 6 or int(digits) > MAX_ITEMS):
            raise LimitExceeded("string too long to evaluate", *where, kind="size")
    return spec


def join_size(sep: Value, items: list[Value], where: tuple[str, int]) -> None:
    """``sep.join(items)`` too long is unknown before it is built."""
    if isinstance(sep, str):
        size = len(sep) * max(len(items) - 1, 0)
        size += sum(len(x) if isinstance(x, str) else 0 for x in items)
        if size > MAX_ITEMS:
            raise LimitExceeded("string too long to evaluate", *where, kind="size")


def format_value(
    value: Value, conversion: int, spec: str, budget: Budget, where: tuple[str, int]
) -> str:
    """A replacement field of an f-string, its size checked before it is built (an
    enum member's is the interpreter's: its class may define ``__format__``)."""
    concretize(value)
    if isinstance(value, int | float | str | bool | type(None)):
        convert = CONVERSIONS.get(conversion)
        if convert is not None:
            value = convert(value)  # the spec then formats the converted text
        try:
            text = format(value, format_spec(spec, where)) if spec else str(value)
        except (ValueError, TypeError):
            raise Unknown("format spec not evaluated", *where) from None
    elif isinstance(value, PyClass):
        text = f"<class '{value.module.dotted}.{value.name}'>"
    elif isinstance(value, Caught) and value.message is not None and not spec:
        exact = value.message  # one argument: Python's str() and repr() of it
        text = f"{value.kind}({exact!r})" if conversion == ord("r") else exact
    elif isinstance(value, list | tuple) and not spec and _plain_items(value):
        weigh(value, budget, where, text=True)  # a list of reasons in a message
        text = str(value)
    elif isinstance(value, External) and not spec and torch_symbol(value):
        text = value.qualname
    elif isinstance(value, Instance) and value.items is not None:
        weigh(value, budget, where)
        fields = ", ".join(f"{k}={v!r}" for k, v in value.fields.items())
        text = f"{value.cls.name}({fields})"
    else:
        raise Unknown(f"formatting {type(value).__name__} not evaluated", *where)
    return paid(text, budget, where)


def _plain_items(value: list[Value] | tuple[Value, ...]) -> bool:
    """Whether every item is a scalar (``str()`` of the sequence is then Python's); a
    text standing for a check not evaluated counts, so a refusal listing it reads."""
    return all(type(item) in SCALARS or isinstance(item, str) for item in value)
