"""The exact lists of known differences, from ``tests/known_differences.toml``.

Tests compare what they find with the list: a difference not listed fails, and
so does a listed one that is gone (the fix takes it off the list), so the lists
only shrink. One data file holds them all, so the state of the product's known
gaps can be read in one place.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "known_differences.toml"


@functools.cache
def _data() -> dict[str, Any]:
    with DATA.open("rb") as handle:
        return tomllib.load(handle)


def known(section: str, name: str) -> dict[str, Any]:
    """The entries of ``[section.name]`` (empty when the table is absent)."""
    table: dict[str, Any] = _data().get(section, {}).get(name, {})
    return table


def known_list(section: str, name: str) -> set[str]:
    """``section.name = [...]``: a list of strings, as a set."""
    value = _data().get(section, {}).get(name, [])
    assert isinstance(value, list), (section, name, value)
    return {str(v) for v in value}


def assert_exactly(found: Iterable[str], section: str, name: str) -> None:
    """``found`` is exactly the list ``section.name``: nothing new, nothing fixed."""
    found = set(found)
    listed = known_list(section, name)
    new, fixed = sorted(found - listed), sorted(listed - found)
    where = f"[{section}] {name} in {DATA.name}"
    assert not new and not fixed, (
        f"differences not in {where} (new: fix them or list them): {new}\n"
        f"listed but no longer found (take them off the list): {fixed}"
    )
