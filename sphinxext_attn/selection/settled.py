"""Decisions that rest on a machine fact nobody set and the code cannot settle.

The reference machine is a CUDA build; on another platform whether an optional
package is installed (aiter on ROCm) is not known. A decision that read such a
fact is made once per value; when the values agree it holds either way, and
when they differ it is conditional: a candidate per value, each with the list
vLLM walks then, never one of them presented as the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sphinxext_attn.knowledge.machine import Machine, machine_of
from sphinxext_attn.model.environment import Environment
from sphinxext_attn.model.selection import Config, Decision
from sphinxext_attn.pyeval import Interpreter

if TYPE_CHECKING:
    from sphinxext_attn.selection.decision import Selector

VALUES = ("true", "false")
MEANING = {"true": "installed", "false": "not installed"}


def settle(selector: Selector, config: Config, decision: Decision) -> Decision:
    machine = machine_of(selector.interp)
    open_facts = [
        name
        for name in (a.split("=", 1)[0] for a in decision.assumptions)
        if name in machine.guessed
    ]
    if not open_facts or decision.error:
        return decision
    name = open_facts[0]
    answers = [(value, sibling(selector, name, value).decide(config)) for value in VALUES]
    first = answers[0][1]
    if all(
        (d.selected, d.priorities, d.candidates) == (first.selected, first.priorities, [])
        and not d.error
        for _, d in answers
    ):
        first.assumptions = [_either(a, name) for a in first.assumptions]
        return first
    return _conditional(name, answers)


def _either(assumption: str, name: str) -> str:
    return f"{name}=true|false" if assumption.split("=", 1)[0] == name else assumption


def _conditional(name: str, answers: list[tuple[str, Decision]]) -> Decision:
    out = conditional(name, answers)
    assumptions: dict[str, None] = {}
    for _, decision in answers:
        for fact in decision.assumptions:
            assumptions.setdefault(_either(fact, name))
    out.assumptions = list(assumptions)
    return out


def conditional(name: str, answers: Sequence[tuple[str, Decision]]) -> Decision:
    """One candidate per value of the fact ``name`` (and per candidate of a
    decision already conditional); a single pick when every value picks it.
    The selector's table (:mod:`.selector_predict`) joins its answers the same way."""
    out = Decision(None, [])
    for value, decision in answers:
        words = f"{_meaning(name, value)} (--assume {name}={value})"
        if decision.candidates:
            for candidate in decision.candidates:
                out.candidates.append({**candidate, "if": f"{words} and {candidate['if']}"})
        else:
            out.candidates.append(
                {
                    "backend": decision.selected or "none",
                    "if": words,
                    "priorities": decision.priorities,
                }
            )
    picks = {c["backend"] for c in out.candidates}
    if len(picks) == 1 and "none" not in picks:  # the same pick from different lists
        out.selected = next(iter(picks))
    return out


def _meaning(name: str, value: str) -> str:
    kind, _, package = name.partition(".")
    if kind == "installed":
        return f"{package} is {MEANING.get(value, value)}"
    return f"{name}() is {value}"


def sibling(selector: Selector, name: str, value: str) -> Selector:
    """The same question on a machine where the fact is set (a selector of the
    same class: this module is imported by, and does not import, the selector's)."""
    key = f"{name}={value}"
    found = selector.siblings.get(key)
    if found is None:
        env = machine_of(selector.interp).environment
        settled = Environment(
            env.env, env.options, {**env.assume, name: value}, env.platform, env.arch
        )
        found = type(selector)(Interpreter(selector.interp.tree, Machine(settled)))
        selector.siblings[key] = found
    return found
