"""The text of evaluated cells: head sizes, block sizes per GPU, compute capabilities.

Apart from the questions that produce the answers, so that a run answered from
kept results writes its page without loading the evaluator.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from sphinxext_attn.vocab.names import CAPABILITIES

#: Longest cell a list of sizes is shown as it is (longer: with rules, if shorter).
MAX_CELL = 40


#: the sizes from ``min`` to ``max`` that are multiples of ``multiple_of`` (None: no bound)
class SizeRule(TypedDict):
    min: int | None
    max: int | None
    multiple_of: int | None


#: a size, or a rule
SizeItem = int | SizeRule
#: the head sizes a class accepts: any, or the union of its items (JSON ``supports``)
HeadSizes = Literal["any"] | list[SizeItem]


def size_rule(lo: int, hi: int | None, step: int) -> SizeRule:
    return {
        "min": lo if lo > step else None,
        "max": hi,
        "multiple_of": step if step > 1 else None,
    }


def head_size_text(items: HeadSizes) -> tuple[str, ...]:
    """The cell: ``()`` (any), ``("None",)``, sizes, or a rule's conditions
    (``%8``, ``≤512``); a union of rules and sizes reads ``64, 128 or ≥256``. A
    list longer than a cell should be is written with rules where that is shorter
    (``%32, ≤256 or 80, 112, 512``): the same set, exactly."""
    if items == "any":
        return ()
    if not items:
        return ("None",)
    sizes = [i for i in items if isinstance(i, int)]
    if len(sizes) == len(items):
        plain = tuple(str(i) for i in sizes)
        if len(", ".join(plain)) <= MAX_CELL:
            return plain
        short = _union_text(_shortened(sizes))
        return (short,) if len(short) < len(", ".join(plain)) else plain
    if len(items) == 1 and not isinstance(items[0], int):
        return tuple(_rule_text(items[0]))
    return (_union_text(items),)


def _union_text(items: list[SizeItem]) -> str:
    """Items smallest first; neighbouring sizes one list, the groups joined by "or"."""
    groups: list[str] = []
    sizes: list[str] = []
    for item in sorted(items, key=_first):
        if isinstance(item, int):
            sizes.append(str(item))
            continue
        if sizes:
            groups.append(", ".join(sizes))
            sizes = []
        groups.append(", ".join(_rule_text(item)))
    if sizes:
        groups.append(", ".join(sizes))
    return " or ".join(groups)


def _shortened(sizes: list[int]) -> list[SizeItem]:
    """The same finite set with runs of multiples as rules, one at a time while a
    rule is shorter than the sizes it stands for (each rule covers only sizes of
    the set, so the union stays exact)."""
    given = set(sizes)
    left = set(sizes)
    rules: list[SizeItem] = []
    while True:
        best: tuple[int, SizeRule, set[int]] | None = None
        for rule, covered in _chains(given):
            saved = len(", ".join(map(str, covered & left))) - len(", ".join(_rule_text(rule)))
            if saved > 0 and (best is None or saved > best[0]):
                best = (saved, rule, covered)
        if best is None:
            return [*rules, *sorted(left)]
        rules.append(best[1])
        left -= best[2]


def _chains(given: set[int]) -> list[tuple[SizeRule, set[int]]]:
    """Each longest run of consecutive multiples of a step that ``given`` holds whole
    (steps: the gaps between its sizes), as a rule and the sizes it covers."""
    ordered = sorted(given)
    steps = {b - a for a, b in zip(ordered, ordered[1:], strict=False)} | {ordered[0]}
    out = []
    for step in sorted(s for s in steps if s > 1):
        run_of: list[int] = []
        for size in [*range(step, ordered[-1] + step + 1, step)]:
            if size in given:
                run_of.append(size)
                continue
            if len(run_of) >= 3:
                out.append((size_rule(run_of[0], run_of[-1], step), set(run_of)))
            run_of = []
    return out


def _first(item: SizeItem) -> int:
    return item if isinstance(item, int) else (item["min"] or item["multiple_of"] or 1)


def _rule_text(rule: SizeRule) -> list[str]:
    parts = [f"%{rule['multiple_of']}"] if rule["multiple_of"] else []
    lo, hi = rule["min"], rule["max"]
    if lo is not None and hi is not None:
        parts.append(f"{lo}-{hi}")
    elif lo is not None:
        parts.append(f"≥{lo}")
    elif hi is not None:
        parts.append(f"≤{hi}")
    return parts or ["Any"]


def first_head_size(items: HeadSizes | None) -> int | None:
    """The smallest accepted size (the input that shows the deciding line)."""
    if items == "any" or not items:
        return None
    return min(_first(i) for i in items)


def per_gpu_labels(by_gpu: dict[tuple[int, int], list[str]], union: list[str]) -> list[str]:
    """Each size with the GPUs that take it, when not all of them do: ``64 (9.x)``."""
    out = []
    for label in union:
        caps = sorted(c for c, labels in by_gpu.items() if label in labels)
        out.append(label if len(caps) == len(by_gpu) else f"{label} ({_families(caps)})")
    return out


def _families(caps: list[tuple[int, int]]) -> str:
    """``9.x`` for every grid capability of a major, else each one."""
    parts: list[str] = []
    for major in sorted({c[0] for c in caps}):
        family = [c for c in CAPABILITIES if c[0] == major]
        picked = [c for c in caps if c[0] == major]
        parts += [f"{major}.x"] if picked == family else [f"{a}.{b}" for a, b in picked]
    return ", ".join(parts)


def capability_text(
    caps: list[tuple[int, int]], told: list[tuple[int, int]] | tuple[tuple[int, int], ...] = ()
) -> str:
    """``[(8, 0), ..., (12, 1)]`` -> ``≥8.0``; families as ``9.x``; else each one.
    ``told``: every capability the check was asked on (the grid and those the
    code names), over which the text is exact; default the grid."""
    points = sorted(set(told or CAPABILITIES) | set(caps))
    chosen = set(caps)
    if chosen == set(points):
        return "Any"
    if not chosen:
        return "None"
    first = min(chosen)
    if chosen == {c for c in points if c >= first}:
        return f"≥{first[0]}.{first[1]}"
    parts: list[str] = []
    for major in sorted({c[0] for c in chosen}):
        family = [c for c in points if c[0] == major]
        picked = [c for c in family if c in chosen]
        if picked == family:
            parts.append(f"{major}.x")
        else:
            parts.extend(f"{a}.{b}" for a, b in picked)
    return ", ".join(parts)
