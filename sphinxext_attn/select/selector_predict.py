"""Reading a decision back out of the selector's factored table, and checking it.

:func:`predict` is the reference for ``attention_backends_selector.js``: the
browser recombines the table the same way. :func:`agreement` compares it
with full :meth:`~sphinxext_attn.select.decision.Selector.decide` answers.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any

from sphinxext_attn.pyeval.statements import NOT_EVALUATED
from sphinxext_attn.select.decision import Config, Decision, Selector
from sphinxext_attn.select.selector_grid import DIMS, combine, list_at, query_value


def predict(table: dict[str, Any], config: Config) -> Decision | None:
    """The decision the factored table gives (None: outside its grid)."""
    grid = {dim: values for dim, values in table["dims"]}
    cap = table["caps"].get(config.capability)
    point = []
    for dim in DIMS:
        value = query_value(getattr(config, dim))
        if value not in grid[dim]:
            return None
        point.append(grid[dim].index(value))
    if cap is None:
        return None
    sizes = [len(grid[dim]) for dim in DIMS]
    names = table["lists"][list_at(cap["priorities"], sizes, point)]
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


def backend_reasons(entry: dict[str, Any], point: Sequence[int]) -> list[int]:
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


def sample_configs(grid: dict[str, tuple[Any, ...]], count: int, seed: int = 0) -> list[Config]:
    rng = random.Random(seed)
    return [
        Config(**{dim: rng.choice(values) for dim, values in grid.items()}) for _ in range(count)
    ]


def agreement(
    table: dict[str, Any], selector: Selector, configs: Iterable[Config]
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


__all__ = ["agreement", "backend_reasons", "predict", "sample_configs"]
