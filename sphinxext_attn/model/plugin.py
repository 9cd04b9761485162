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
    """One plugin folder: its packages (top-level names), entry points and the
    platforms they bring (named when the plugin is read as a tree's, so that a
    platform name is checked against the plugins a run or build holds)."""

    folder: Path
    packages: tuple[str, ...]
    entry_points: tuple[EntryPoint, ...] = field(default=())
    platforms: tuple[str, ...] = field(default=())

    @property
    def platform_entries(self) -> list[EntryPoint]:
        return [e for e in self.entry_points if e.group == PLATFORM_GROUP]


#: the plugins of a tree, in the order they were given (none: vLLM's files alone)
Plugins = tuple[Plugin, ...]


def brought_platforms(plugins: Plugins) -> tuple[str, ...]:
    """The platforms ``plugins`` bring, in their order, each once."""
    return tuple(dict.fromkeys(name for plugin in plugins for name in plugin.platforms))
