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

from sphinxext_attn.pyeval import (
    CAPABILITY,
    NODE,
    AbstractInt,
    Bound,
    IntSet,
    PyFunction,
    Raised,
    Run,
    Unknown,
    explore,
)
from sphinxext_attn.runtime.cell_text import size_rule
from sphinxext_attn.runtime.questions import Answer, Asker
from sphinxext_attn.vocab.names import CAPABILITIES

METHOD = "supports_head_size"
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
        return [size_rule(part.lo, part.hi, part.mod)]
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
    return [size_rule(part.lo, part.hi, step) for step in steps]
