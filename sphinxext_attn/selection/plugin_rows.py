"""The backend classes a platform's selection reaches, for its feature rows: the
registry's entries, with a plugin's overrides in force on its platform, and the
classes its rules name by path. Where names collide (vllm-ascend's classes share
``CUSTOM``), each class is a row of its own, named with its class."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from sphinxext_attn.knowledge.plugin_registry import plugin_overrides
from sphinxext_attn.model.platform import PlatformSelection
from sphinxext_attn.model.records import Location
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.source.registry import RegistryEntry


def reached_entries(
    interp: Interpreter, selection: PlatformSelection, registry: Iterable[RegistryEntry]
) -> list[RegistryEntry]:
    """One entry per class the selection reaches, in the registry's order, then the
    rules' own class paths in the rules' order."""
    reached = selection.backends()
    overrides = {
        o.name: (o.class_path, Location(o.path, o.line))
        for o in plugin_overrides(interp, selection.source)
    }
    entries: list[RegistryEntry] = []
    for entry in registry:
        if entry.name not in reached:
            continue
        if entry.name in overrides:
            path, where = overrides[entry.name]
            entry = dataclasses.replace(entry, class_path=path, location=where)
        entries.append(entry)
    taken = {e.class_path for e in entries}
    by_path = [r for r in selection.rules if r.class_path and r.class_path not in taken]
    for rule in by_path:
        taken.add(rule.class_path)
        where = Location(selection.source, rule.line)
        entries = [e for e in entries if not (e.name == rule.outcome and not e.class_path)]
        entries.append(RegistryEntry(rule.outcome, rule.class_path, where))
    return _named_apart(entries)


def _named_apart(entries: list[RegistryEntry]) -> list[RegistryEntry]:
    """Entries sharing a name are told apart by their class (``CUSTOM (AscendMLABackend)``)."""
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry.name] = counts.get(entry.name, 0) + 1
    return [
        dataclasses.replace(e, name=f"{e.name} ({e.class_path.rpartition('.')[2]})")
        if counts[e.name] > 1
        else e
        for e in entries
    ]


#: a rule's condition that holds for MLA layers alone, as the rules read it
MLA_CONDITION = re.compile(r"\(*(attn_selector_config\.)?use_mla\)*")


def reached_for_mla_only(selection: PlatformSelection, name: str) -> bool:
    """Whether every rule giving ``name`` holds for MLA layers only (TPU's
    ``FLASH_ATTN_MLA``, whose class does not say ``is_mla`` itself): its row belongs
    in the MLA table of that platform."""
    rules = [r for r in selection.rules if r.outcome == name]
    return bool(rules) and all(
        any(MLA_CONDITION.fullmatch(c) for c in r.conditions) for r in rules
    )
