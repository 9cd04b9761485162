"""Reading a decision back out of the selector's factored table, and checking it.

:func:`predict` is the reference for ``attention_backends_selector.js``: the
browser recombines the table the same way. :func:`agreement` compares it
with full :meth:`~sphinxext_attn.selection.decision.Selector.decide` answers.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Protocol

from sphinxext_attn.model.selection import Config, Decision
from sphinxext_attn.model.selector_shape import BackendEntry, Grid, SelectorData
from sphinxext_attn.pyeval import NOT_EVALUATED
from sphinxext_attn.selection.settled import conditional
from sphinxext_attn.selector.facts import state_for, table_at
from sphinxext_attn.selector.grid import (
    RULES,
    UNKNOWN,
    combine,
    list_at,
    query_value,
    rule_outcome,
)
from sphinxext_attn.selector.probe import LEFT_OUT


def predict(
    table: SelectorData, config: Config, facts: Mapping[str, str] | None = None
) -> Decision | None:
    """The decision the factored table gives (None: outside its grid), with the
    environment controls at ``facts`` (the page's defaults for the others; a
    guessed fact left at "" is decided both ways, as ``select`` does)."""
    values = {f["name"]: f["default"] for f in table.get("facts", [])}
    values.update(facts or {})
    open_facts = [
        f["name"] for f in table.get("facts", []) if f["guessed"] and values[f["name"]] == ""
    ]
    if open_facts:
        name = open_facts[0]
        answers = [
            (value, predict(table, config, {**values, name: value})) for value in ("true", "false")
        ]
        return settle_predicted(name, answers)
    if "states" in table:
        state, missing = state_for(table, values)
        if missing:  # a combination the page holds no decisions for
            return None
        table = table_at(table, state)
    if len(table["caps"]) == 1 and table.get("platform", "cuda") != "cuda":
        config = replace(config, capability=next(iter(table["caps"])))
    if table.get("kind") == RULES:
        return _rule_decision(table, config)
    return _predict(table, config)


def _dims(table: SelectorData) -> list[str]:
    return [dim for dim, _ in table["dims"] if dim != "capability"]


def _point(table: SelectorData, config: Config) -> list[int] | None:
    grid = {dim: values for dim, values in table["dims"]}
    point = []
    for dim in _dims(table):
        value = query_value(getattr(config, dim))
        if value not in grid[dim]:
            return None
        point.append(grid[dim].index(value))
    return point


def _rule_decision(table: SelectorData, config: Config) -> Decision | None:
    point = _point(table, config)
    if point is None or config.capability not in table["caps"]:
        return None
    entries = table["caps"][config.capability]["backends"]
    checks = [int(bool(backend_reasons(entries[c], point))) for c in table.get("checks", [])]
    kind, text = rule_outcome(table, config.capability, [*point, *checks])
    if kind == "selected":
        return Decision(text, [text])
    if kind == UNKNOWN:
        return Decision(None, [], unknown={"*": text}, error=f"{NOT_EVALUATED}{text}")
    return Decision(None, [], raised=text)


def settle_predicted(name: str, answers: list[tuple[str, Decision | None]]) -> Decision | None:
    """Two decisions, one per value of a guessed fact, as :mod:`.settled` joins them."""
    if any(d is None for _, d in answers):
        return None
    decisions = [d for _, d in answers if d is not None]
    first = decisions[0]
    if all(
        (d.selected, d.priorities, d.candidates) == (first.selected, first.priorities, [])
        for d in decisions
    ):
        return first
    return conditional(name, [(value, d) for value, d in answers if d is not None])


def _predict(table: SelectorData, config: Config) -> Decision | None:
    grid = {dim: values for dim, values in table["dims"]}
    cap = table["caps"].get(config.capability)
    point = _point(table, config)
    if point is None or cap is None:
        return None
    sizes = [len(grid[dim]) for dim in _dims(table)]
    names = [
        name
        for name in table["lists"][list_at(cap["priorities"], sizes, point)]
        if [table["reasons"][r] for r in backend_reasons(cap["backends"][name], point)]
        != [LEFT_OUT]
    ]
    selected = None
    rejected: dict[str, list[str]] = {}
    unknown: dict[str, str] = {}
    for name in names:
        found = backend_reasons(cap["backends"][name], point)
        if not found:
            selected = name
            break
        texts = [table["reasons"][r] for r in found]
        if len(texts) == 1 and texts[0].startswith(NOT_EVALUATED):
            unknown[name] = texts[0].removeprefix(NOT_EVALUATED)
        else:
            rejected[name] = texts
    decision = Decision(selected, list(names), rejected, unknown)
    decision.make_conditional()  # a pick behind a backend not evaluated: conditional
    return decision


def backend_reasons(entry: BackendEntry, point: Sequence[int]) -> list[int]:
    """A backend's reasons at ``point``: each dimension's own, then the corrections
    of the pairs and triples of dimensions that interact."""
    base = entry["base"]
    factors = [
        row[point[int(d)]] for d, row in entry["single"].items() if point[int(d)] != base[int(d)]
    ]
    found = set(combine(entry["reasons"], factors, entry["order"]))
    for key in sorted(entry["joint"], key=lambda k: k.count(",")):  # pairs, then triples
        dims = [int(x) for x in key.split(",")]
        delta = entry["joint"][key].get(",".join(str(point[d]) for d in dims))
        if delta is not None:
            found = (found | set(delta[0])) - set(delta[1])
    rank = {r: i for i, r in enumerate(entry["order"])}
    return sorted(found, key=lambda r: rank.get(r, len(rank)))


def sample_configs(grid: Grid, count: int, seed: int = 0) -> list[Config]:
    rng = random.Random(seed)
    return [
        Config(**{dim: rng.choice(values) for dim, values in grid.items()}) for _ in range(count)
    ]


class Decides(Protocol):
    """What :func:`agreement` compares with: :class:`Selector` or decisions it made."""

    def decide(self, config: Config) -> Decision: ...


def agreement(
    table: SelectorData, selector: Decides, configs: Iterable[Config]
) -> tuple[int, int, int, list[Config]]:
    """(decisions equal, selected equal, compared, configs that differ) against decide()."""
    same = chosen = total = 0
    wrong = []
    for config in configs:
        guess = predict(table, config)
        if guess is None:
            continue
        truth = selector.decide(config)
        total += 1
        chosen += guess.selected == truth.selected
        if (guess.selected, guess.priorities, _tried(guess)) == (
            truth.selected,
            truth.priorities,
            _tried(truth),
        ) and _candidates(guess) == _candidates(truth):
            same += 1
        else:
            wrong.append(config)
    return same, chosen, total, wrong


def _tried(decision: Decision) -> dict[str, list[str]]:
    """What each backend tried before the pick (or the last candidate) answered:
    its reasons, each once (vLLM repeats some), or that it was not evaluated."""
    last = decision.selected or (
        decision.candidates[-1]["backend"] if decision.candidates else None
    )
    names = decision.priorities
    ahead = names[: names.index(last) + 1] if last in names else names
    return {
        n: list(dict.fromkeys(decision.rejected.get(n, [])))
        or [f"{NOT_EVALUATED}{decision.unknown.get(n, '')}"]
        for n in ahead
        if n != last
    }


def _candidates(decision: Decision) -> list[str]:
    return [c["backend"] for c in decision.candidates]


__all__ = ["Decides", "agreement", "backend_reasons", "predict", "sample_configs"]
