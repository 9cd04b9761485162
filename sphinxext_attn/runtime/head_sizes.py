"""Head sizes as the rule the code states, not a sample of a grid.

``supports_head_size`` (and whatever it consults: ``get_supported_head_sizes``,
the base class's default, another backend's rule) is run over an abstract head
size (:mod:`sphinxext_attn.pyeval.abstract`), which gives the exact set of
positive sizes the class accepts. The set is written as JSON items (ints and
rules ``{"min", "max", "multiple_of"}`` whose union is the set) and as a short
cell (``≥32``, ``%8, ≤512``, ``64, 128, 256``). A rule the domain cannot keep,
or a set these items cannot write, is an :class:`Unknown` with its reason.
"""

from __future__ import annotations

from typing import Any

from sphinxext_attn.pyeval import Raised, Unknown
from sphinxext_attn.pyeval.abstract import AbstractInt, explore
from sphinxext_attn.pyeval.intsets import IntSet, Run
from sphinxext_attn.pyeval.values import CAPABILITY, NODE, Bound, PyFunction
from sphinxext_attn.runtime.questions import Answer, Asker
from sphinxext_attn.vocab.names import CAPABILITIES

METHOD = "supports_head_size"
#: Longest cell a list of sizes is shown as it is (longer: with rules, if shorter).
MAX_CELL = 40
#: A finite run of multiples is listed size by size up to this many (``64, 128``).
FEW = 4
#: A finite run with other remainders than 0 is listed size by size up to this many.
MAX_LISTED = 32


def head_size_answer(ask: Asker) -> Answer:
    """The head sizes the class accepts on some GPU, as JSON items (or "any")."""
    missing = ask.has(METHOD)
    if missing is not None:
        return missing
    interp = ask.interp
    where = _where(ask)

    def accepted(capability: tuple[int, int] | None) -> IntSet:
        def question(size: AbstractInt) -> bool:
            try:
                value = ask.call(METHOD, size, capability=capability)
                return interp.truth(value, NODE, ask.cls.path)
            except Raised:
                return False  # vLLM, asking it, would fail: not accepted

        return explore(question, where)

    try:
        with interp.guarded(where):
            try:
                found = accepted(None)
            except Unknown:
                if not ask.last_read & CAPABILITY:  # unknown for another reason
                    raise
                found = IntSet()
                for capability in CAPABILITIES:
                    found = found | accepted(capability)
        return Answer(json_items(found, where))
    except Unknown as exc:
        return Answer(unknown=exc if exc.path else exc.located(*where))


def _where(ask: Asker) -> tuple[str, int]:
    """The ``def`` of the method (where a rule that cannot be kept is reported)."""
    try:
        method = ask.method(METHOD)
    except (Unknown, Raised):  # picked by GPU: the class is the place
        return ask.cls.path, ask.cls.node.lineno
    func = method.func if isinstance(method, Bound) else method
    if isinstance(func, PyFunction):
        return func.path, func.node.lineno
    return ask.cls.path, ask.cls.node.lineno


def json_items(sizes: IntSet, where: tuple[str, int]) -> Any:
    """``"any"``, or ints and rules whose union is ``sizes``."""
    if sizes.is_everything():
        return "any"
    items: list[Any] = []
    for part in sizes.runs:
        items.extend(_run_items(part, where))
    return items


def _run_items(part: Run, where: tuple[str, int]) -> list[Any]:
    """A run's items: its sizes when it has few (``64, 128``), else rules."""
    members: list[int] = []
    if part.hi is not None:
        for size in part.members():
            members.append(size)
            if len(members) > MAX_LISTED:
                break
    plain = part.residues == frozenset({0})
    if members and len(members) <= (FEW if plain else MAX_LISTED):
        return members
    if plain:
        return [_rule(part.lo, part.hi, part.mod)]
    # remainders other than 0: a union of multiples where each divisor's fit
    covered: set[int] = set()
    steps = []
    for step in range(1, part.mod):
        multiples = set(range(0, part.mod, step))
        if part.mod % step == 0 and multiples <= part.residues and not multiples <= covered:
            steps.append(step)
            covered |= multiples
    if covered != part.residues:
        raise Unknown(
            f"the accepted head sizes (remainders {sorted(part.residues)} of {part.mod}) "
            "are not bounds and multiples",
            *where,
        )
    return [_rule(part.lo, part.hi, step) for step in steps]


def _rule(lo: int, hi: int | None, step: int) -> Any:
    return {
        "min": lo if lo > step else None,
        "max": hi,
        "multiple_of": step if step > 1 else None,
    }


def head_size_text(items: Any) -> tuple[str, ...]:
    """The cell: ``()`` (any), ``("None",)``, sizes, or a rule's conditions
    (``%8``, ``≤512``); a union of rules and sizes reads ``64, 128 or ≥256``. A
    list longer than a cell should be is written with rules where that is shorter
    (``%32, ≤256 or 80, 112, 512``): the same set, exactly."""
    if items == "any":
        return ()
    if not items:
        return ("None",)
    if all(isinstance(i, int) for i in items):
        plain = tuple(str(i) for i in items)
        if len(", ".join(plain)) <= MAX_CELL:
            return plain
        short = _union_text(_shortened(items))
        return (short,) if len(short) < len(", ".join(plain)) else plain
    if len(items) == 1:
        return tuple(_rule_text(items[0]))
    return (_union_text(items),)


def _union_text(items: list[Any]) -> str:
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


def _shortened(sizes: list[int]) -> list[Any]:
    """The same finite set with runs of multiples as rules, one at a time while a
    rule is shorter than the sizes it stands for (each rule covers only sizes of
    the set, so the union stays exact)."""
    given = set(sizes)
    left = set(sizes)
    rules: list[Any] = []
    while True:
        best: tuple[int, Any, set[int]] | None = None
        for rule, covered in _chains(given):
            saved = len(", ".join(map(str, covered & left))) - len(", ".join(_rule_text(rule)))
            if saved > 0 and (best is None or saved > best[0]):
                best = (saved, rule, covered)
        if best is None:
            return [*rules, *sorted(left)]
        rules.append(best[1])
        left -= best[2]


def _chains(given: set[int]) -> list[tuple[Any, set[int]]]:
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
                out.append((_rule(run_of[0], run_of[-1], step), set(run_of)))
            run_of = []
    return out


def _first(item: Any) -> int:
    return item if isinstance(item, int) else (item["min"] or item["multiple_of"] or 1)


def _rule_text(rule: dict[str, Any]) -> list[str]:
    parts = [f"%{rule['multiple_of']}"] if rule["multiple_of"] else []
    lo, hi = rule["min"], rule["max"]
    if lo is not None and hi is not None:
        parts.append(f"{lo}-{hi}")
    elif lo is not None:
        parts.append(f"≥{lo}")
    elif hi is not None:
        parts.append(f"≤{hi}")
    return parts or ["Any"]


def first_head_size(items: Any) -> int | None:
    """The smallest accepted size (the input that shows the deciding line)."""
    if items == "any" or not items:
        return None
    return min(_first(i) for i in items)
