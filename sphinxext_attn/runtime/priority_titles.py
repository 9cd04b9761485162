"""Group the priority function's paths per architecture and title each list.

GPUs whose paths are identical form one architecture (the ones the code tells
apart). Within one, the paths that return the same list are merged while
they differ in a single parameter, and what remains is said in words: the
parameters a list depends on, with the values that lead to it.
"""

from __future__ import annotations

from collections.abc import Iterable

from sphinxext_attn.model.records import Location, PriorityList
from sphinxext_attn.pyeval import Interpreter, Raised, Unknown
from sphinxext_attn.runtime.priority_paths import Choice, Path, explore, priority_function

CAPABILITY = "device_capability"
CATEGORY = "use_mla"
#: How a flag reads when it is true and when it is false.
FLAG_WORDS = {
    "use_mm_prefix": ("with a multimodal prefix", "without a multimodal prefix"),
    "use_non_causal": ("non-causal", "causal"),
    "use_sparse": ("sparse", "dense"),
    "has_sink": ("with sinks", "without sinks"),
}
NOUNS = {"num_heads": "heads", "head_size": "head size", "kv_cache_dtype": "KV cache"}
#: What a condition looks like before words: parameter -> the choice indices allowed.
Condition = dict[str, frozenset[int]]


def _category(path: Path, choices: dict[str, list[Choice]]) -> str:
    for name, i in path.read:
        if name == CATEGORY:
            return "mla" if choices[name][i].value else "standard"
    return "standard"


def _applies(path: Path, param: str, index: int) -> bool:
    return all(i == index for name, i in path.read if name == param)


def _arches(paths: list[Path], choices: dict[str, list[Choice]]) -> list[list[int]]:
    """GPU indices grouped by identical behaviour, in grid order."""
    groups: dict[frozenset[object], list[int]] = {}
    for ci in range(len(choices.get(CAPABILITY, [None]))):
        signature = frozenset(
            (tuple(r for r in p.read if r[0] != CAPABILITY), p.backends)
            for p in paths
            if _applies(p, CAPABILITY, ci)
        )
        groups.setdefault(signature, []).append(ci)
    return list(groups.values())


def _arch_name(caps: list[tuple[int, int]], everyone: list[tuple[int, int]], largest: bool) -> str:
    majors = {c[0] for c in caps}
    if len(majors) == 1 and not largest:
        major = next(iter(majors))
        if caps == [c for c in everyone if c[0] == major]:
            return f"sm{major}0"
        return "+".join(f"sm{a}{b}" for a, b in caps)
    return "default"


def _arch_title(name: str, caps: list[tuple[int, int]], everyone: list[tuple[int, int]]) -> str:
    if name == "sm100":
        return "Blackwell (SM 10.x)"
    if name == "sm90":
        return "Hopper (SM 9.x)"
    shown: list[str] = []
    for major in dict.fromkeys(c[0] for c in caps):
        mine = [c for c in caps if c[0] == major]
        if mine == [c for c in everyone if c[0] == major] and len(mine) > 1:
            shown.append(f"{major}.x")
        else:
            shown += [f"{a}.{b}" for a, b in mine]
    if name == "default":
        return f"Other GPUs (SM {', '.join(shown)})"
    return f"SM {', '.join(shown)}"


def _merge(conditions: list[Condition]) -> list[Condition]:
    """Join conditions that differ in one parameter, until none do."""
    merged = True
    while merged:
        merged = False
        for i, a in enumerate(conditions):
            for j in range(i + 1, len(conditions)):
                b = conditions[j]
                differ = [k for k in a if a[k] != b[k]]
                if len(differ) <= 1:
                    key = differ[0] if differ else next(iter(a), None)
                    joined = dict(a)
                    if key is not None:
                        joined[key] = a[key] | b[key]
                    conditions[i] = joined
                    del conditions[j]
                    merged = True
                    break
            if merged:
                break
    return conditions


def _numbers(chosen: list[Choice]) -> list[str]:
    words = ["unknown" for c in chosen if c.value is None]
    spans = sorted(c.span for c in chosen if c.span is not None)
    ranges: list[list[float]] = []
    for low, high in spans:
        if ranges and ranges[-1][1] + 1 >= low:
            ranges[-1][1] = max(ranges[-1][1], high)
        else:
            ranges.append([low, high])
    for low, high in ranges:
        if low == float("-inf"):
            words.append(f"≤ {int(high)}")
        elif high == float("inf"):
            words.append(f"≥ {int(low)}")
        else:
            words.append(f"{int(low)}" if low == high else f"{int(low)}-{int(high)}")
    return words


def _describe(name: str, allowed: frozenset[int], choices: list[Choice]) -> str:
    chosen = [choices[i] for i in sorted(allowed)]
    others = [c for i, c in enumerate(choices) if i not in allowed]
    if all(isinstance(c.value, bool) for c in choices):
        yes, no = FLAG_WORDS.get(name, (name, f"not {name}"))
        return yes if chosen[0].value else no
    noun = NOUNS.get(name, name)
    if any(c.span is not None for c in choices):
        if len(others) == 1 and others[0].span and others[0].span[0] == others[0].span[1]:
            return f"{noun} not {others[0].label}"
        return f"{noun} {' or '.join(_numbers(chosen))}"
    if len(others) < len(chosen):
        return f"{noun} other than {', '.join(c.label for c in others)}"
    return f"{noun} {', '.join(c.label for c in chosen)}"


def _words(condition: Condition, choices: dict[str, list[Choice]]) -> str:
    return ", ".join(
        _describe(name, allowed, choices[name])
        for name, allowed in condition.items()
        if len(allowed) < len(choices[name])
    )


def _lists_of(
    paths: Iterable[Path], choices: dict[str, list[Choice]]
) -> list[tuple[tuple[str, ...], str, int]]:
    """(backends, conditions in words, line) per distinct list, in order of discovery."""
    free = [n for n in choices if n not in (CAPABILITY, CATEGORY)]
    grouped: dict[tuple[str, ...], tuple[list[Condition], int]] = {}
    for path in paths:
        read = dict(path.read)
        condition = {
            n: frozenset({read[n]}) if n in read else frozenset(range(len(choices[n])))
            for n in free
        }
        grouped.setdefault(path.backends, ([], path.line))[0].append(condition)
    out = []
    for backends, (conditions, line) in grouped.items():
        words = [_words(c, choices) for c in _merge(conditions)]
        text = "" if len(grouped) == 1 else " or ".join(w for w in words if w)
        out.append((backends, text, line))
    return out


def evaluated_priorities(interp: Interpreter) -> list[PriorityList]:
    """Every list the release's priority function returns, per category and GPU group."""
    func = priority_function(interp)
    if func is None:
        return []
    choices, paths = explore(interp, func)
    caps = [c.value for c in choices.get(CAPABILITY, [])]
    location = func.path
    out: list[PriorityList] = []
    for category in ("standard", "mla"):
        mine = [p for p in paths if _category(p, choices) == category]
        if not mine:
            continue
        groups = _arches(mine, choices) if caps else [[0]]
        biggest = max(groups, key=len)
        named = []
        for group in groups:
            gpus = [caps[i] for i in group] if caps else []
            name = _arch_name(gpus, caps, group is biggest) if caps else "default"
            named.append((name, group, gpus))
        named.sort(key=lambda n: (n[0] != "default", n[2][0] if n[2] else (0, 0)))
        for name, group, gpus in named:
            here = [p for p in mine if _applies(p, CAPABILITY, group[0])]
            for backends, text, line in _lists_of(here, choices):
                out.append(
                    PriorityList(
                        category,
                        name,
                        backends,
                        Location(location, line),
                        conditions=text,
                        arch_title=_arch_title(name, gpus, caps) if caps else "",
                        capabilities=tuple(f"{a}.{b}" for a, b in gpus),
                    )
                )
    return out


def safe_evaluated_priorities(interp: Interpreter) -> tuple[list[PriorityList], Unknown | None]:
    """The lists, or why they could not be evaluated (the page reader's lists stay)."""
    try:
        with interp.guarded():
            return evaluated_priorities(interp), None
    except Unknown as exc:
        return [], exc
    except Raised as exc:
        return [], Unknown(f"{exc.kind}: {exc.message}")


__all__ = ["evaluated_priorities", "safe_evaluated_priorities"]
