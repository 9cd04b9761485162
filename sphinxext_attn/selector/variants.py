"""The selector's tables per platform: one factored table per platform and GPU.

A page offers the platforms its ``:platforms:`` option names (CUDA alone by
default, so a CUDA-only selector costs what it did). Each platform's table is
built by its own code, on a machine of that platform:

* CUDA: over the grid's compute capabilities (:class:`.TableBuilder`);
* ROCm: one table per GPU the release's ``rocm.py`` names, the capability
  derived from the arch by the release's code (:func:`.named_archs`), through
  the same ``get_valid_backends`` loop as CUDA's;
* XPU and CPU: the outcome of their ordered rules (:mod:`.selector_rules`).

Every table then gets its environment controls (:mod:`.selector_facts`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from sphinxext_attn.knowledge.machine import Machine, machine_of
from sphinxext_attn.model.environment import Environment
from sphinxext_attn.model.selection import Config
from sphinxext_attn.model.selector_shape import BackendEntry, PriorityTable, SelectorData
from sphinxext_attn.pyeval import MISSING, Instance, Interpreter, Raised, Unknown
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.selection.platform_lists import named_archs
from sphinxext_attn.selector.builder import TableBuilder
from sphinxext_attn.selector.checks import StandInMachine
from sphinxext_attn.selector.facts import explore
from sphinxext_attn.selector.grid import GRID, LAYER_GRID
from sphinxext_attn.selector.parallel import build_and_explore
from sphinxext_attn.selector.requests import add_requests
from sphinxext_attn.selector.rules import RuleTableBuilder
from sphinxext_attn.source.tree import SourceTree

#: how a page's data names a table: ``cuda``, ``rocm:gfx942``, ``xpu``, ``cpu``
Variant = tuple[str, str]


def variant_key(platform: str, arch: str = "") -> str:
    return f"{platform}:{arch}" if arch else platform


def variants(tree: SourceTree, platforms: Sequence[str], base: Environment) -> list[Variant]:
    """The tables a page offering ``platforms`` needs (ROCm: every GPU the release
    names, or the one the environment names)."""
    out: list[Variant] = []
    for platform in platforms:
        if platform != "rocm":
            out.append((platform, ""))
            continue
        on = Environment(base.env, base.options, base.assume, "rocm", base.arch)
        archs = [base.arch] if base.arch else named_archs(tree, on)
        out.extend(("rocm", arch) for arch in archs)
    return out


def builder_for(tree: SourceTree, environment: Environment) -> TableBuilder | RuleTableBuilder:
    """The builder of one platform's table, on a machine of ``environment``."""
    selector = Selector(Interpreter(tree, Machine(environment)))
    if environment.platform == "cuda":
        return TableBuilder(selector, GRID)
    interp = selector.interp
    with interp.guarded():
        platform = machine_of(interp).platform(interp)
        rules = isinstance(platform, Instance) and (
            interp.class_attr(platform.cls, "get_valid_backends")[0] is MISSING
        )
        if rules:  # no priority list: the question is asked on the default GPU
            grid = {**GRID, "capability": (Config().capability,), **LAYER_GRID}
            stand_in = Selector(Interpreter(tree, StandInMachine(environment)))
            return RuleTableBuilder(stand_in, grid, plain=selector)
        major, minor = selector.gpu(Config())
    return TableBuilder(selector, {**GRID, "capability": (f"{major}.{minor}",), **LAYER_GRID})


def build_variant(
    tree: SourceTree, base: Environment, variant: Variant, requests: bool = False
) -> SelectorData:
    """One platform's (and GPU's) table with its environment controls (and, with
    ``requests``, the answers to a backend asked for: :mod:`.requests`)."""
    platform, arch = variant
    environment = Environment(base.env, base.options, base.assume, platform, arch)
    builder = builder_for(tree, environment)
    with builder.selector.interp.guarded():
        if isinstance(builder, TableBuilder):
            table = build_and_explore(builder, environment, lambda env: builder_for(tree, env))
        else:
            table = builder.build()
            explore(table, builder, environment, lambda env: builder_for(tree, env))
    if requests:  # asked as select --backend asks, on a machine of its own
        asking = Selector(Interpreter(tree, Machine(environment)))
        with asking.interp.guarded():
            add_requests(table, asking, builder.grid)
    table["platform"], table["arch"] = platform, arch
    return keep_used(table)


def keep_used(table: SelectorData) -> SelectorData:
    """``table`` without the settings of :data:`LAYER_GRID` that no answer of it
    depends on (in no priority table's keys, no backend's own or joint reasons, in
    no setting of the environment controls): a page offers a control for the KV
    connector or the model's attention type only where the code reads it."""
    names = [dim for dim, _ in table["dims"] if dim != "capability"]
    entries = list(_entries(table))
    used: set[int] = set()
    for priorities, backends in entries:
        used.update(priorities["keys"] if priorities is not None else [])
        for entry in backends.values():
            used.update(int(d) for d in entry["single"])
            used.update(int(d) for key in entry["joint"] for d in key.split(","))
    drop = [names.index(d) for d in LAYER_GRID if d in names and names.index(d) not in used]
    if not drop:
        return table
    new: dict[int, int] = {}
    for old in range(len(names) + len(table.get("checks", []))):
        if old not in drop:
            new[old] = len(new)
    table["dims"] = [d for d in table["dims"] if d[0] == "capability" or names.index(d[0]) in new]
    table["defaults"] = [v for i, v in enumerate(table["defaults"]) if i in new]
    for priorities, backends in entries:
        if priorities is not None:
            priorities["keys"] = [new[k] for k in priorities["keys"]]
        for entry in backends.values():
            entry["base"] = [v for i, v in enumerate(entry["base"]) if i in new]
            entry["single"] = {str(new[int(d)]): row for d, row in entry["single"].items()}
            entry["joint"] = {
                ",".join(str(new[int(d)]) for d in key.split(",")): values
                for key, values in entry["joint"].items()
            }
    return table


def _entries(
    table: SelectorData,
) -> Iterator[tuple[PriorityTable | None, dict[str, BackendEntry]]]:
    """Every capability's priority table and backends' entries, the default's then
    each setting's (an entry a setting shares with another is met once per setting)."""
    for data in table["caps"].values():
        yield data["priorities"], data["backends"]
    for state in table.get("states", {}).values():
        for override in state.get("caps", {}).values():
            yield override.get("priorities"), override.get("backends", {})
    yield None, {str(i): entry for i, entry in enumerate(table.get("requests", []))}


def build_variants(
    tree: SourceTree, platforms: Sequence[str], base: Environment, requests: bool = False
) -> tuple[dict[str, SelectorData], list[str]]:
    """Every table of a page (by :func:`variant_key`), and the problems of those
    that could not be built (``key: why``; a page shows the others). The first
    (the page's default) raises instead."""
    tables: dict[str, SelectorData] = {}
    problems: list[str] = []
    for number, platform in enumerate(platforms):
        try:
            found = variants(tree, (platform,), base)
        except (Unknown, Raised, KeyError) as exc:  # no such platform in the tree
            if number == 0:
                raise
            problems.append(f"{platform}: {exc}")
            continue
        for index, variant in enumerate(found):
            try:
                tables[variant_key(*variant)] = build_variant(tree, base, variant, requests)
            except (Unknown, Raised, KeyError) as exc:
                if number == index == 0:  # the page's default: no selector without it
                    raise
                problems.append(f"{variant_key(*variant)}: {exc}")
    return tables, problems


__all__ = ["Variant", "build_variant", "build_variants", "builder_for", "variant_key", "variants"]
