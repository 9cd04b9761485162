"""What a value is to plain Python: a str/int enum member is its value, a named
tuple its tuple (comparisons, ``str()``, methods of ``str``).
"""

from __future__ import annotations

import sys

from sphinxext_attn.pyeval.values import EnumMember, External, Instance, PyClass, Unknown, Value


def plain_enum_class(mro: list[Value]) -> bool:
    """Members of a ``str``/``int`` enum compare equal to their values (``AttentionType``)."""
    return any(
        isinstance(c, External)
        and c.qualname in ("builtins.str", "builtins.int", "enum.StrEnum", "enum.IntEnum")
        for c in mro
    )


def check_not_auto(value: Value, where: tuple[str, int]) -> None:
    """The value of an ``enum.auto()`` member depends on ``_generate_next_value_``
    and the members before it: unknown, never the marker compared as a value."""
    if isinstance(value, External) and value.qualname == "enum.auto()":
        raise Unknown("value of an enum.auto() member not evaluated", *where)


def enum_is_plain(member: EnumMember) -> bool:
    return member.plain


def enum_str(member: EnumMember) -> str:
    """``str(member)``: ``Cls.NAME``, or the value for ``StrEnum`` and ``IntEnum``."""
    for c in member.cls.mro_cache or ():
        if isinstance(c, External) and c.qualname in ("enum.StrEnum", "enum.IntEnum"):
            return str(member.value)
    return f"{member.cls.name}.{member.name}"


def plain_value(value: Value) -> Value:
    """The value a plain comparison sees (``str``-enum members compare as strings)."""
    if isinstance(value, EnumMember) and enum_is_plain(value):
        return value.value
    if isinstance(value, Instance) and value.items is not None:
        return tuple(plain_value(v) for v in value.items)
    return value


def no_mro(bases: list[Value]) -> str:
    """CPython's words (on two lines before 3.13) for bases no order can follow."""
    names = ", ".join(
        b.name if isinstance(b, PyClass) else getattr(b, "qualname", "?").rsplit(".")[-1]
        for b in bases
    )
    wrap = " " if sys.version_info >= (3, 13) else "\n"
    return f"Cannot create a consistent method resolution{wrap}order (MRO) for bases {names}"


__all__ = [
    "check_not_auto",
    "enum_is_plain",
    "enum_str",
    "no_mro",
    "plain_enum_class",
    "plain_value",
]
