"""A vLLM platform plugin as read from its folder: the value a front end hands to the
trees it makes and to the key of every analysis it asks for (hashable, so that an
analysis read with plugins is never taken for one read without)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sphinxext_attn.vocab.names import PLATFORM_PLUGIN_GROUP as PLATFORM_GROUP


@dataclass(frozen=True)
class EntryPoint:
    group: str
    name: str
    module: str
    function: str


@dataclass(frozen=True)
class Plugin:
    """One plugin folder: its packages (top-level names) and entry points."""

    folder: Path
    packages: tuple[str, ...]
    entry_points: tuple[EntryPoint, ...] = field(default=())

    @property
    def platform_entries(self) -> list[EntryPoint]:
        return [e for e in self.entry_points if e.group == PLATFORM_GROUP]


#: the plugins of a tree, in the order they were given (none: vLLM's files alone)
Plugins = tuple[Plugin, ...]
