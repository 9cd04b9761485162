"""The backend classes a platform's selection reaches, for its feature rows: the
registry's entries, with a plugin's overrides in force on its platform, and the
classes its rules name by path. Where names collide (vllm-ascend's classes share
``CUSTOM``), each class is a row of its own, named with its class."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from sphinxext_attn.model.records import Location
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.pyeval.plugin_registry import plugin_overrides
from sphinxext_attn.select.platforms import PlatformSelection
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


def readable_class(interp: Interpreter, entry: RegistryEntry) -> bool:
    """Whether a plugin's class ``entry`` names can be read; if not, a warning naming
    the file (a link out of the plugin's folder, a missing module, a path outside
    both trees). vLLM's own classes are checked where vLLM's tables are built."""
    tree = interp.tree
    module, _, name = entry.class_path.rpartition(".")
    where = entry.location
    if tree.owns(module) and module.split(".", 1)[0] not in tree.plugin_roots:
        return True
    candidates = tree.module_file_candidates(module)
    if not tree.owns(module) or not candidates:
        tree.warn(
            f"{entry.name}: class path {entry.class_path!r} is outside the vllm package "
            "and its plugins",
            where.path,
            where.line,
            "outside",
        )
        return False
    if tree.is_outside(candidates[0]) or (
        tree.module_file(module) is None and tree.is_outside(candidates[1])
    ):
        tree.warn(
            f"{entry.name}: class path {entry.class_path!r} resolves outside the plugin's folder",
            candidates[0],
            0,
            "outside",
        )
        return False
    path = tree.module_file(module)
    if path is None:
        tree.warn(
            f"{entry.name}: module file {candidates[0]} not found",
            where.path,
            where.line,
            "missing",
        )
        return False
    return True


def check_plugin_modules(interp: Interpreter) -> None:
    """Syntax-check the plugin modules the evaluator read piece by piece: a file
    broken outside the pieces asked for still gets its warning (file and line)."""
    from sphinxext_attn.source.syntax_check import syntax_problems

    tree = interp.tree
    for scope in list(interp.modules.values()):
        rel = getattr(scope, "path", "")
        if not rel or rel.split("/", 1)[0] not in tree.plugin_roots:
            continue
        text = tree.text(rel)
        for message, line in syntax_problems(rel, text) if text else ():
            tree.warn(message, rel, line, subtype="syntax")
