"""The selector's table asked in two processes at once.

Building a platform's table asks thousands of questions (a backend's reasons
at one point of the grid), and those of one capability's entries and their
repair (:func:`.selector_repair.repair` corrects each entry from its own
answers) need nothing from another capability's. So a forked process
(:mod:`sphinxext_attn.analysis.forked`) asks the questions of half the
capabilities while this one asks those of the other half; this one then takes
the child's answers and builds the table as it would alone, now finding
them asked. Only the answers cross: the table, the order in which reasons
and lists are numbered and every record of what was read come from the one
sequential build, so the table is the same byte for byte with or without
the child (and without it, where the platform cannot fork, or the child
fails: then this process asks everything itself).

An answer that hit an evaluator limit is not taken (:attr:`.ProbeAnswer.portable`):
how far a budget goes depends on the memos of the process that asked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sphinxext_attn.analysis import forked
from sphinxext_attn.model.environment import Environment
from sphinxext_attn.pyeval import Raised, Unknown
from sphinxext_attn.select.selector_builder import TableBuilder
from sphinxext_attn.select.selector_facts import explore
from sphinxext_attn.select.selector_probe import ProbeAnswer
from sphinxext_attn.select.selector_repair import repair

#: answers by the environment key of the machine they were asked on (the
#: table's own, and each setting's of :func:`.selector_facts.explore`), with the
#: machine facts guessed there
Answers = dict[str, tuple[dict[tuple[str, tuple[Any, ...]], ProbeAnswer], set[str]]]
#: a setting's builder (a :class:`TableBuilder` where the table's is one)
MakeBuilder = Callable[[Environment], Any]


@dataclass
class Asked:
    """What the child sends back: its answers, and what asking them touched."""

    answers: Answers
    #: the tree files the child read that this process had not (in order)
    files: list[str]
    directories: list[str]


def prefetch(
    builder: TableBuilder,
    capabilities: Sequence[str],
    environment: Environment,
    make_builder: MakeBuilder,
) -> Answers:
    """Ask the questions of the entries of ``capabilities``, of their repair and of
    their settings (:func:`.selector_facts.explore`), through ``builder``'s
    prober, keeping nothing else of ``builder``'s; the answers asked, by machine.
    A question that cannot be answered stops here: the real build meets it
    again in its own order and says so."""
    scratch = builder.scratch()
    settings: list[tuple[str, TableBuilder]] = []

    def making(env: Environment) -> Any:
        sib = make_builder(env)
        if isinstance(sib, TableBuilder):
            settings.append((env.key(), sib))
        return sib

    try:
        caps = scratch.entries(capabilities)
        repair(scratch, caps)
        explore({"caps": caps}, scratch, environment, making)
    except (Unknown, Raised, KeyError):
        pass
    out: Answers = {}
    for key, asker in [(environment.key(), builder), *settings]:
        answers, guessed = out.setdefault(key, ({}, set()))
        answers.update(asker.prober.asked())
        guessed |= asker.selector.interp.machine.guessed
    return out


def _asked_in_child(
    builder: TableBuilder,
    capabilities: Sequence[str],
    environment: Environment,
    make_builder: MakeBuilder,
    files: int,
) -> Asked:
    answers = prefetch(builder, capabilities, environment, make_builder)
    tree = builder.selector.interp.tree
    return Asked(answers, tree.files[files:], tree.directories)


def build_and_explore(
    builder: TableBuilder, environment: Environment, make_builder: MakeBuilder
) -> dict[str, Any]:
    """``builder.build()`` with its settings explored (:func:`.selector_facts.explore`,
    siblings made by ``make_builder``), the questions of the last capabilities
    asked by a forked child while this process asks those of the first."""
    capabilities = list(builder.grid["capability"])
    answers: Answers = {}
    if len(capabilities) >= 2 and forked.can_fork():
        half = (len(capabilities) + 1) // 2
        mine, theirs = capabilities[:half], capabilities[half:]
        tree = builder.selector.interp.tree
        files = len(tree.files)
        child = forked.Forked(
            lambda: _asked_in_child(builder, theirs, environment, make_builder, files)
        )
        try:
            answers = prefetch(builder, mine, environment, make_builder)
        finally:
            asked = child.result()
        if isinstance(asked, Asked):
            tree.files.extend(asked.files)
            tree.note_directories(asked.directories)
            for key, (theirs_answers, guessed) in asked.answers.items():
                found, mine_guessed = answers.setdefault(key, ({}, set()))
                for question, answer in theirs_answers.items():
                    found.setdefault(question, answer)
                mine_guessed |= guessed
        main = answers.pop(environment.key(), None)
        if main is not None:
            builder.prober.adopt(*main)

    def made(env: Environment) -> Any:
        sib = make_builder(env)
        kept = answers.get(env.key())
        if kept is not None and isinstance(sib, TableBuilder):
            sib.prober.adopt(*kept)
        return sib

    table = builder.build()
    explore(table, builder, environment, made)
    return table


__all__ = ["Asked", "build_and_explore", "prefetch"]
