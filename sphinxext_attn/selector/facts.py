"""The selector's environment controls: the facts the decisions on a page read, and
what the table becomes when one of them is set otherwise.

Which facts matter is not a list of names: every question the table is built
from records the machine facts it read (an environment variable through
``os.getenv``, an installed package, the network, ...: see
:mod:`sphinxext_attn.knowledge.machine`). A fact read by some entry of the table
(a priority table, a backend's reasons on one GPU) is tried with its other
values (an environment variable unset, ``1`` and ``0``; a yes/no fact both
ways), and only the entries that read it are evaluated again, on a machine
where it is set so. Setting a fact can make the code read others
(``VLLM_ROCM_USE_AITER=1`` reads ``VLLM_ROCM_USE_AITER_MHA``): the settings
are explored as a tree, a branch for each value of each fact read where it
stands, as the code branches. What ships is, per setting, the entries that
differ from the page's default table; a setting that changes nothing where
it stands is not shipped, and the widget walks the same tree, skipping it
(``attention_backends_selector.js``, :func:`state_for`). A control is offered
for each fact some shipped setting sets.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import NamedTuple, Protocol, Self, cast

from sphinxext_attn.knowledge.machine import machine_of
from sphinxext_attn.model.environment import Environment
from sphinxext_attn.model.selector_shape import (
    BackendEntry,
    CapEntry,
    CapOverride,
    Control,
    Entry,
    EntryKey,
    Fact,
    PriorityTable,
    SelectorData,
    State,
)
from sphinxext_attn.pyeval import NODE, STEPS_PER_CELL, Raised, Unknown
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.selector.grid import Interner
from sphinxext_attn.vocab.paths import ENVS_MODULE

#: an environment variable as vLLM names them (facts such as ``installed.aiter`` are not)
ENV_VAR = re.compile(r"[A-Z][A-Z0-9_]*\Z")
ENV_VALUES = ("unset", "1", "0")
TRUTH_VALUES = ("true", "false")
#: settings explored per table before the rest is left out (and the page says so)
MAX_STATES = 48


class Builder(Protocol):
    """What the walk needs of a table's builder (a CUDA-like or a rule platform's)."""

    facts: dict[EntryKey, dict[str, str]]
    #: per entry, the points whose question read a machine fact, with the facts
    point_facts: dict[EntryKey, dict[tuple[int, ...], dict[str, str]]]
    lists: Interner[list[str]]
    reasons: Interner[str]
    selector: Selector

    def entry(self, cap: str, key: str) -> Entry: ...

    def learn_from(self, other: Self, differing: Collection[str]) -> None: ...

    def answer(self, cap: str, key: str, point: Sequence[int]) -> int | list[int]: ...


#: the facts (name -> value) each entry read in one setting
EntryFacts = dict[EntryKey, dict[str, str]]
#: the entries of one setting that differ from the default table
Overrides = dict[EntryKey, Entry]


class _Setting(NamedTuple):
    """One setting of the walk: the facts set, what each entry read there, its
    entries that differ, the facts read at the root, and who built each entry."""

    fixed: dict[str, str]
    efacts: EntryFacts
    overrides: Overrides
    before: set[str]
    owners: dict[EntryKey, Builder]


def values_of(name: str, value: str) -> tuple[str, ...] | None:
    """The values a control offers for a fact read as ``value`` (None: no control:
    the GPU's arch, an engine option's default, the CPU's name)."""
    if ENV_VAR.match(name):
        return ENV_VALUES if value in ENV_VALUES else (value, *ENV_VALUES)
    if value in TRUTH_VALUES:
        return TRUTH_VALUES
    return None


def controllable(facts: Mapping[str, str]) -> dict[str, str]:
    return {n: v for n, v in facts.items() if values_of(n, v) is not None}


def environment_with(base: Environment, fixed: Mapping[str, str]) -> Environment:
    """``base`` with each fact of ``fixed`` set: a variable set or unset, a fact assumed."""
    env, assume = dict(base.env), dict(base.assume)
    for name, value in fixed.items():
        if not ENV_VAR.match(name):
            assume[name] = value
        elif value == "unset":
            env.pop(name, None)
        else:
            env[name] = value
    return Environment(env, base.options, assume, base.platform, base.arch)


def state_key(fixed: Mapping[str, str]) -> str:
    return ";".join(f"{n}={v}" for n, v in sorted(fixed.items()))


def _reads(efacts: Mapping[EntryKey, Mapping[str, str]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for facts in efacts.values():
        for name, value in facts.items():
            out.setdefault(name, value)
    return dict(sorted(out.items()))


def explore(
    table: SelectorData,
    builder: Builder,
    base: Environment,
    make_builder: Callable[[Environment], Builder],
) -> int:
    """Add ``facts`` (the controls) and ``states`` (per setting, the entries that
    differ) to ``table``, built by ``builder`` on ``base``; the entries asked again.

    Each fact read on the page's machine is set to each of its other values, one at
    a time. From a setting, the facts the page's machine does not read are set in
    turn, in every combination (``VLLM_ROCM_USE_AITER=1`` reads ``VLLM_ROCM_USE_AITER_MHA``), and
    so is a guessed fact (the widget decides it both ways in every setting); other
    combinations are left to ``select``, and the widget says so."""
    root = {k: controllable(v) for k, v in builder.facts.items()}
    guessed = set(machine_of(builder.selector.interp).guessed)
    controls: dict[str, Control] = {}
    states: dict[str, State] = {"": {"reads": _reads(root)}}
    same: list[str] = []
    owners0: dict[EntryKey, Builder] = {k: builder for k in builder.facts}
    queue = [_Setting({}, root, {}, set(), owners0)]
    asked = 0
    while queue:
        fixed, efacts, overrides, before, owners = queue.pop(0)
        for name, current in _reads(efacts).items():
            if ENV_VAR.match(name) and not isinstance(_parsed(builder, name), bool):
                continue  # not a switch of vLLM's envs.py (a path, a name): no values
            options = values_of(name, current) or ()
            controls.setdefault(name, {"values": list(options), "default": current})
            if name in fixed or (name in before and name not in guessed):
                continue
            for value in options:
                child = {**fixed, name: value}
                key = state_key(child)
                if value == current or key in states or key in same:
                    continue
                if len(states) + len(same) >= MAX_STATES:
                    table["facts_truncated"] = True
                    continue
                sib = make_builder(environment_with(base, child))
                if _read_alike(builder, sib, name):
                    same.append(key)  # vLLM's envs.py reads the value as the default
                    continue
                sib.reasons, sib.lists = builder.reasons, builder.lists
                sib.learn_from(builder, child)  # answers that read no fact of ``child`` kept
                mine, changed, owned, count = _evaluate(
                    table, sib, name, efacts, overrides, owners
                )
                asked += count
                guessed |= machine_of(sib.selector.interp).guessed
                if changed == overrides:
                    same.append(key)  # changes nothing here: the walk skips it
                    continue
                states[key] = {"reads": _reads(mine), "caps": _shipped(changed)}
                queue.append(_Setting(child, mine, changed, set(_reads(root)), owned))
    set_by_reader = {*base.env, *base.assume}
    used = {part.split("=", 1)[0] for key in states if key for part in key.split(";")}
    table["facts"] = []
    for name, info in sorted(controls.items()):
        if name not in used:
            continue
        # a guessed fact nobody set starts open: the widget decides it both ways
        open_fact = name in guessed and name not in set_by_reader
        if open_fact:
            info = {"values": ["", *info["values"]], "default": ""}
        # "set": the docs' configuration sets it (else its default is the reference
        # machine's, which the page says)
        entry: Fact = {
            "values": info["values"],
            "default": info["default"],
            "name": name,
            "guessed": open_fact,
            "set": name in set_by_reader,
        }
        table["facts"].append(entry)
    table["states"] = states
    table["same"] = same
    table["reasons"], table["lists"] = builder.reasons.items, builder.lists.items
    return asked


def _evaluate(
    table: SelectorData,
    sib: Builder,
    name: str,
    efacts: EntryFacts,
    overrides: Overrides,
    owners: dict[EntryKey, Builder],
) -> tuple[EntryFacts, Overrides, dict[EntryKey, Builder], int]:
    """The entries of the parent setting that read ``name``, on ``sib``'s machine.

    An entry's questions that did not read the fact answer alike there; those
    that did are asked again first, and only an entry one of them answers
    otherwise is built again (from scratch: its shape may change)."""
    mine, changed, owned = dict(efacts), dict(overrides), dict(owners)
    count = 0
    for cap, data in table["caps"].items():
        keys = [""]  # the list first: it says which backends are tried
        while keys:
            key = keys.pop(0)
            entry_key = (cap, key)
            if not key and data["backends"]:
                keys = sorted(_universe(table, cap, changed, sib))
            if entry_key in efacts and name not in efacts[entry_key]:
                continue
            owner = owners.get(entry_key)
            if owner is not None and not _answers_differ(owner, sib, cap, key, name):
                continue
            entry = sib.entry(cap, key)
            count += 1
            mine[entry_key] = controllable(sib.facts.get(entry_key, {}))
            owned[entry_key] = sib
            default: Entry | None = data["priorities"] if not key else data["backends"].get(key)
            _keep(changed, entry_key, entry, default)
            if not key and data["backends"]:
                keys = sorted(_universe(table, cap, changed, sib))
    return mine, changed, owned, count


def _read_alike(builder: Builder, sib: Builder, name: str) -> bool:
    """Whether the tree's ``vllm/envs.py`` gives the variable the same value on both
    machines (``0`` for a switch that is off by default)."""
    first, second = _parsed(builder, name), _parsed(sib, name)
    return isinstance(first, bool) and first is second


def _parsed(builder: Builder, name: str) -> object:
    """The value ``vllm/envs.py`` gives the variable on ``builder``'s machine (None:
    it does not declare it, or it cannot be evaluated)."""
    interp = builder.selector.interp
    module = interp.module(ENVS_MODULE)
    try:
        with interp.question(capability=None, steps=STEPS_PER_CELL):
            if module is None or not module.has(name):
                return None
            return interp.module_attr(module, name, NODE)
    except (Unknown, Raised):
        return None


def _universe(table: SelectorData, cap: str, changed: Overrides, sib: Builder) -> set[str]:
    if "checks" in table:  # a rule platform's: the checks its rules ask
        return set(table["checks"])
    prio = cast(PriorityTable, changed.get((cap, ""), table["caps"][cap]["priorities"]))
    return {b for i in set(prio["table"]) for b in sib.lists.items[i]}


def _answers_differ(owner: Builder, sib: Builder, cap: str, key: str, name: str) -> bool:
    points = owner.point_facts.get((cap, key), {})
    asked = [p for p, facts in points.items() if name in facts]
    if not asked:  # (a rule platform's outcome table keeps no points: asked again)
        return True
    return any(owner.answer(cap, key, p) != sib.answer(cap, key, p) for p in asked)


def _keep(changed: Overrides, key: EntryKey, entry: Entry, default: Entry | None) -> None:
    if entry != default:
        changed[key] = entry
    else:
        changed.pop(key, None)


def _shipped(changed: Overrides) -> dict[str, CapOverride]:
    out: dict[str, CapOverride] = {}
    for (cap, key), entry in sorted(changed.items()):
        mine = out.setdefault(cap, {})
        if key:
            mine.setdefault("backends", {})[key] = cast(BackendEntry, entry)
        else:
            mine["priorities"] = cast(PriorityTable, entry)
    return out


def state_for(table: SelectorData, values: Mapping[str, str]) -> tuple[str, list[str]]:
    """The setting whose entries answer for the controls' ``values``, and the facts
    set otherwise than there that the page holds no decisions for together with it.

    From the default, each fact read where the walk stands whose control differs is
    set, one at a time (as :func:`explore` branched); a setting that changes nothing
    there, or a value that changes nothing on the page's machine (``0`` for a
    variable whose default is off), is skipped."""
    fixed: dict[str, str] = {}
    states = table.get("states", {})
    same = set(table.get("same", []))
    while True:
        here = states[state_key(fixed)]
        missing = []
        for name, value in here["reads"].items():
            if name in fixed or name not in values or values[name] in (value, ""):
                continue
            key = state_key({**fixed, name: values[name]})
            if key in states:
                fixed[name] = values[name]
                break
            if key not in same and state_key({name: values[name]}) not in same:
                missing.append(name)  # (a value the default reads alike, as unset: skipped)
        else:
            return state_key(fixed), missing


def table_at(table: SelectorData, state: str) -> SelectorData:
    """The table as it is in one setting (the default's entries where none differs)."""
    override = table.get("states", {}).get(state, {"reads": {}}).get("caps", {})
    caps: dict[str, CapEntry] = {}
    for cap, data in table["caps"].items():
        mine = override.get(cap, {})
        caps[cap] = {
            "priorities": mine.get("priorities", data["priorities"]),
            "backends": {**data["backends"], **mine.get("backends", {})},
        }
    return {**table, "caps": caps}


__all__ = [
    "MAX_STATES",
    "controllable",
    "environment_with",
    "explore",
    "state_for",
    "state_key",
    "table_at",
    "values_of",
]
