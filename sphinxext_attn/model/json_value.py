"""The shape of JSON data: what ``--format json``, the diff's JSON, a decision's and
the selector's data are made of, so their builders say what they return.

Read-only containers (``Sequence``, ``Mapping``) so a ``list[str]`` or a
``dict[str, int]`` is JSON data as it is; :data:`JsonObject` is the mutable
object a builder fills.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TypeAlias

JsonValue: TypeAlias = (
    None | bool | int | float | str | Sequence["JsonValue"] | Mapping[str, "JsonValue"]
)
JsonObject: TypeAlias = dict[str, JsonValue]


def as_json(value: object) -> JsonValue:
    """``value`` as JSON data, checked: tuples and lists as lists, a dataclass as the
    object of its fields (as :func:`dataclasses.asdict`), mappings with ``str`` keys
    as objects. Anything else is a :class:`TypeError` here, not a surprise in the
    output; what ``json.dumps`` writes of the result is what it writes of ``value``."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [as_json(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: as_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        out: JsonObject = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"a JSON object's key is a string, not {key!r}")
            out[key] = as_json(item)
        return out
    raise TypeError(f"not JSON data: {type(value).__name__}")
