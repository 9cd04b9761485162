"""What would change a decision: the named facts it read, changed one at a time
(then two together, where no single one changes it), each decided again.

A decision lists the facts its evaluation read (``assumptions``: environment
variables, engine options at their defaults, assumed machine facts). Each is
set to its other value(s) and the same question asked again; a change is kept
only where the outcome differs, and a pair only where neither of its facts
changes it alone, so each alternative is a smallest set. Nothing is guessed:
every listed outcome is the release's code evaluated in that environment.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from sphinxext_attn.model.environment import Environment
from sphinxext_attn.model.json_value import JsonObject, JsonValue
from sphinxext_attn.model.selection import Alternative

#: a decision in another environment (the JSON of a decision)
Decide = Callable[[Environment], JsonObject]
#: more facts than this: pairs are not tried (each is a whole decision)
MAX_FACTS_FOR_PAIRS = 6
_OPTION_DEFAULT = "default ("


def _changes(assumption: str) -> list[tuple[str, str, str]]:
    """The other values worth trying for one read fact: (kind, name, value), where
    kind is ``env``, ``option`` or ``assume`` (the JSON keys of an alternative)."""
    name, _, value = assumption.partition("=")
    if name == "arch" or "|" in value:  # the GPU asked about; a fact settled either way
        return []
    if value.startswith(_OPTION_DEFAULT):
        default = value[len(_OPTION_DEFAULT) : -1]
        if default in ("None", "True", "False"):
            return [("option", name, v) for v in ("true", "false") if v != default.lower()]
        return []
    if name.isupper():  # an environment variable, read unset or set
        return [("env", name, "1")] if value == "unset" else [("env", name, "unset")]
    if value in ("true", "false"):
        return [("assume", name, "false" if value == "true" else "true")]
    return []


def _apply(environment: Environment, changes: tuple[tuple[str, str, str], ...]) -> Environment:
    env = dict(environment.env)
    options = dict(environment.options)
    assume = dict(environment.assume)
    for kind, name, value in changes:
        if kind == "env":
            if value == "unset":
                env.pop(name, None)
            else:
                env[name] = value
        elif kind == "option":
            options[name] = value
        else:
            assume[name] = value
    return Environment(env, options, assume, environment.platform, environment.arch)


def _outcome(data: JsonObject) -> tuple[JsonValue] | None:
    """What an alternative must change: the backend used (or a refusal); None for
    an answer that is not definite (conditional, not evaluated)."""
    not_evaluated = bool(data.get("error")) and not data.get("refused")
    if data.get("candidates") or not_evaluated:
        return None
    return (data.get("selected"),)


def _entry(changes: tuple[tuple[str, str, str], ...], data: JsonObject) -> Alternative:
    by_kind: dict[str, dict[str, str]] = {"env": {}, "assume": {}, "option": {}}
    for kind, name, value in changes:
        by_kind[kind][name] = value
    selected = data.get("selected")
    return Alternative(
        env=by_kind["env"],
        assume=by_kind["assume"],
        option=by_kind["option"],
        selected=selected if isinstance(selected, str) else None,
    )


def alternatives(
    decision: JsonObject, environment: Environment, decide: Decide
) -> list[Alternative]:
    """The smallest changes of the facts ``decision`` read that give another outcome,
    each with the backend vLLM then uses (None: it raises)."""
    here = _outcome(decision)
    if here is None:
        return []
    read = decision.get("assumptions")
    facts = [a for a in read if isinstance(a, str)] if isinstance(read, list) else []
    options = [c for a in facts for c in _changes(a)]
    found: list[Alternative] = []
    changed: set[tuple[str, str]] = set()
    for change in options:
        data = decide(_apply(environment, (change,)))
        other = _outcome(data)
        if other is not None and other != here:
            found.append(_entry((change,), data))
            changed.add(change[:2])
    if found or len(options) > MAX_FACTS_FOR_PAIRS:
        return found
    for pair in itertools.combinations(options, 2):
        if pair[0][1] == pair[1][1] or {c[:2] for c in pair} & changed:
            continue
        data = decide(_apply(environment, pair))
        other = _outcome(data)
        if other is not None and other != here:
            found.append(_entry(pair, data))
    return found
