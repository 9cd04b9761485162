"""The selector's table asked in two processes at once.

Building a platform's table asks thousands of questions (a backend's reasons
at one point of the grid), and those of one capability's entries and their
repair (:func:`.selector_repair.repair` corrects each entry from its own
answers) need nothing from another capability's. So a forked process
(:mod:`sphinxext_attn.parallel.forked`) asks the questions of half the
capabilities while this one asks those of the other half; this one then takes
the child's answers and builds the table as it would alone, now finding
them asked. Only the answers cross: the table, the order in which reasons
and lists are numbered and every record of what was read come from the one
sequential build, so the table is the same byte for byte with or without
the child (and without it, where the platform cannot fork, or the child
fails: then this process asks everything itself).

An answer that hit an evaluator limit is not taken (:attr:`.ProbeAnswer.portable`):
how far a budget goes depends on the memos of the process that asked. The
full decisions the table is checked against are made by a second child
(:func:`decide_in_child`). Children are forked only where a core is spare
(:func:`.forked.spare_core`): each process warms its own memos, so on a busy
machine a child only adds work.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sphinxext_attn.knowledge.machine import Machine, machine_of
from sphinxext_attn.model.environment import Environment
from sphinxext_attn.model.selection import Config, Decision
from sphinxext_attn.model.selector_shape import SelectorData
from sphinxext_attn.parallel import forked
from sphinxext_attn.pyeval import Interpreter, Raised, Unknown
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.selector.builder import TableBuilder
from sphinxext_attn.selector.facts import explore
from sphinxext_attn.selector.probe import ProbeAnswer, QuestionKey
from sphinxext_attn.selector.repair import repair
from sphinxext_attn.selector.rules import RuleTableBuilder
from sphinxext_attn.source.tree import SourceTree

#: answers by the environment key of the machine they were asked on (the
#: table's own, and each setting's of :func:`.selector_facts.explore`), with the
#: machine facts guessed there
Answers = dict[str, tuple[dict[QuestionKey, ProbeAnswer], set[str]]]
#: a setting's builder (a :class:`TableBuilder` where the table's is one)
MakeBuilder = Callable[[Environment], TableBuilder | RuleTableBuilder]


#: full decisions by configuration (:meth:`Config.key`), with the tree files and
#: directories each read
Decisions = dict[tuple[object, ...], tuple[Decision, list[str], list[str]]]


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
    settings: list[tuple[str, TableBuilder]] | None = None,
) -> Answers:
    """Ask the questions of the entries of ``capabilities``, of their repair and of
    their settings (:func:`.selector_facts.explore`), through ``builder``'s
    prober, keeping nothing else of ``builder``'s; the answers asked, by machine.
    A question that cannot be answered stops here: the real build meets it
    again in its own order and says so. The settings' builders are added to
    ``settings`` with their machine's key."""
    scratch = builder.scratch()
    settings = [] if settings is None else settings

    def making(env: Environment) -> TableBuilder | RuleTableBuilder:
        sib = make_builder(env)
        if isinstance(sib, TableBuilder):
            settings.append((env.key(), sib))
        return sib

    with contextlib.suppress(Unknown, Raised, KeyError):
        caps = scratch.entries(capabilities)
        repair(scratch, caps)
        partial: SelectorData = {
            "dims": [],
            "defaults": [],
            "reasons": [],
            "lists": [],
            "caps": caps,
        }
        explore(partial, scratch, environment, making)
    out: Answers = {}
    for key, asker in [(environment.key(), builder), *settings]:
        answers, guessed = out.setdefault(key, ({}, set()))
        answers.update(asker.prober.asked())
        guessed |= machine_of(asker.selector.interp).guessed
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


def split(capabilities: list[str]) -> tuple[list[str], list[str]]:
    """This process's capabilities and the child's: the first half and the rest
    (the last ones, newer GPUs, list more backends)."""
    half = (len(capabilities) + 1) // 2
    return capabilities[:half], capabilities[half:]


def build_and_explore(
    builder: TableBuilder, environment: Environment, make_builder: MakeBuilder
) -> SelectorData:
    """``builder.build()`` with its settings explored (:func:`.selector_facts.explore`,
    siblings made by ``make_builder``), the questions of the last capabilities
    asked by a forked child while this process asks those of the first."""
    capabilities = list(builder.grid["capability"])
    answers: Answers = {}
    #: the settings' builders this process made while asking: their evaluators
    #: and answers serve again (with records of their own, as new builders)
    settings: list[tuple[str, TableBuilder]] = []
    if len(capabilities) >= 2 and forked.can_fork() and forked.spare_core():
        mine, theirs = split(capabilities)
        tree = builder.selector.interp.tree
        files = len(tree.files)
        child = forked.Forked(
            lambda: _asked_in_child(builder, theirs, environment, make_builder, files)
        )
        try:
            answers = prefetch(builder, mine, environment, make_builder, settings)
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

    made_here = dict(settings)

    def made(env: Environment) -> TableBuilder | RuleTableBuilder:
        key = env.key()
        sib = made_here[key].scratch() if key in made_here else make_builder(env)
        kept = answers.get(key)
        if kept is not None and isinstance(sib, TableBuilder):
            sib.prober.adopt(*kept)
        return sib

    table = builder.build()
    explore(table, builder, environment, made)
    return table


class Decided:
    """Full decisions made by a forked child (:func:`decide_in_child`), handed out
    as :meth:`Selector.decide` would make them here: the files each read are
    then read here too. A configuration the child did not decide is decided
    here, by ``fallback``."""

    def __init__(
        self,
        tree: SourceTree,
        decided: Decisions,
        fallback: Callable[[], Selector],
    ) -> None:
        self.tree = tree
        self.decided = decided
        self.fallback = fallback
        self._selector: Selector | None = None

    def decide(self, config: Config) -> Decision:
        found = self.decided.get(config.key())
        if found is None:
            if self._selector is None:
                self._selector = self.fallback()
            return self._selector.decide(config)
        decision, files, directories = found
        self.tree.files.extend(files)
        self.tree.note_directories(directories)
        return decision


def decide_in_child(
    tree: SourceTree, environment: Environment, configs: Sequence[Config]
) -> forked.Forked | None:
    """A forked child deciding ``configs`` on a fresh evaluator of ``environment``
    (the agreement check of a table, :func:`.selector_predict.agreement`), while
    this process builds the table; None where the platform cannot fork."""
    if not configs or not forked.can_fork() or not forked.spare_core():
        return None
    return forked.Forked(lambda: _decisions(tree, environment, configs))


def _decisions(tree: SourceTree, environment: Environment, configs: Sequence[Config]) -> Decisions:
    selector = Selector(Interpreter(tree, Machine(environment)))
    out = {}
    for config in configs:
        files, directories = len(tree.files), len(tree.directories)
        decision = selector.decide(config)
        out[config.key()] = (decision, tree.files[files:], tree.directories[directories:])
    return out


__all__ = ["Asked", "Decided", "build_and_explore", "decide_in_child", "prefetch"]
