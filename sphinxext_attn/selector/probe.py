"""Questions the interactive selector's table is built from, asked the way vLLM asks them.

Two questions, both answered by evaluating the tree's own code with the
:class:`~sphinxext_attn.selection.decision.Selector`'s evaluator:

* :meth:`Prober.priorities`: the list vLLM's ``_get_backend_priorities``
  returns for a configuration (the function itself, called with the
  arguments its signature takes, by name);
* :meth:`Prober.reasons`: why one backend rejects a configuration. The
  platform's ``get_valid_backends`` is evaluated as for a whole decision, with
  ``_get_backend_priorities`` answering just that backend, so the reasons are
  produced by the same loop (import failures included) as the CLI's.

A prober for another setting of the machine (see :mod:`.selector_facts`) takes
from the prober of the page's default the answers that read none of the facts
set otherwise (:meth:`Prober.learn_from`): they are the same there, so only the
questions that read a changed fact are asked again.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from sphinxext_attn.knowledge.devices import platform_class
from sphinxext_attn.knowledge.machine import machine_of
from sphinxext_attn.model.selection import Config
from sphinxext_attn.pyeval import (
    NODE,
    NOT_EVALUATED,
    STEPS_PER_DECISION,
    Bound,
    Builtin,
    EnumMember,
    Instance,
    LimitExceeded,
    PyFunction,
    Question,
    Raised,
    Unknown,
)
from sphinxext_attn.runtime.priority_paths import priority_function
from sphinxext_attn.selection.answers import param_names
from sphinxext_attn.selection.decision import Selector, read_valid_backends
from sphinxext_attn.selector.gpu_reads import GpuReads, Observed, replay
from sphinxext_attn.selector.passthrough import PassThrough
from sphinxext_attn.vocab.names import PRIORITY_FUNCTION
from sphinxext_attn.vocab.paths import CUDA_PLATFORM_FILE, CUDA_PLATFORM_MODULE

#: parameters of the priority function that are not configuration fields
CAPABILITY_PARAM = "device_capability"
#: answers kept per backend and configuration (on different GPUs) to try on another
MAX_OBSERVED = 4
#: a question of a prober: a backend and a configuration (:meth:`Config.key`)
QuestionKey = tuple[str, tuple[object, ...]]
#: the "reason" of a backend ``get_valid_backends`` takes out of the list it tries (the
#: selector's table drops it from the list there, as vLLM does)
LEFT_OUT = "(left out of the list by get_valid_backends)"


@dataclass(frozen=True)
class ProbeAnswer:
    """One backend's reasons for one configuration, and what the question read."""

    reasons: tuple[str, ...]
    #: the machine facts (name -> value) as the table records them (a question
    #: that ended in an unknown or an exception records none)
    facts: dict[str, str]
    #: every machine fact the question read, however it ended
    read: frozenset[str]
    #: whether another machine that differs in none of ``read`` answers alike: not
    #: when an evaluator limit was hit (memos decide how far a budget goes)
    portable: bool


class Prober:
    """Per-backend and per-list questions on one tree (one evaluator)."""

    def __init__(self, selector: Selector) -> None:
        self.selector = selector
        self.interp = selector.interp
        platform = machine_of(self.interp).environment.platform
        if platform == "cuda":
            function = priority_function(self.interp)
            module = self.interp.module(CUDA_PLATFORM_MODULE)  # where the stand-in goes
            where = CUDA_PLATFORM_FILE
        else:  # the module of the platform's class holds its priority function (ROCm)
            cls = platform_class(self.interp, platform)
            module, where = cls.module, cls.path
            found = (
                module.lookup(PRIORITY_FUNCTION, self.interp, NODE)
                if module.has(PRIORITY_FUNCTION)
                else None
            )
            function = found if isinstance(found, PyFunction) else None
        if function is None or module is None:
            raise Unknown(f"no plain function {PRIORITY_FUNCTION} in the tree", where)
        self.function = function
        self.module = module
        self.members: dict[str, EnumMember] = {}
        self._answers: dict[QuestionKey, ProbeAnswer] = {}
        #: by backend and configuration without its GPU: answers asked, each with the
        #: calls through which it looked at the GPU (:mod:`.gpu_reads`)
        self._observed: dict[QuestionKey, list[tuple[tuple[Observed, ...], ProbeAnswer]]] = {}
        #: full questions asked, and answers found on another GPU
        self.asked_in_full = self.from_other_gpus = 0
        selector.read_gpu_argument()
        #: answers asked by another process (:meth:`adopt`), and the facts it guessed
        self._adopted: dict[QuestionKey, ProbeAnswer] = {}
        self._guessed_there: set[str] = set()
        #: the priority lists asked, with the facts each read, by configuration
        self._lists: dict[tuple[object, ...], tuple[list[str], list[tuple[str, str]]]] = {}
        #: the machine facts (name -> value) each question read, gathered by the
        #: table's builder per entry (see :mod:`.selector_facts`)
        self.read: dict[str, str] = {}
        #: members of another evaluator of the same tree, whose enum is looked up here
        self._known: list[EnumMember] = []
        #: a prober on a machine that differs from this one in the facts named
        self._donor: tuple[Prober, frozenset[str]] | None = None
        #: answers from the backend's check alone (where the build of a selector
        #: config reads no machine fact: it is the same for every question)
        self._through = (
            None if selector.config_reads_environment else PassThrough(selector, self.module)
        )

    def learn_from(self, other: Prober, differing: Collection[str] = ()) -> None:
        """Find backends by the enum ``other`` found them in (see :meth:`member`), and
        take ``other``'s answers that read none of the facts ``differing`` (set
        otherwise on this machine than on ``other``'s): the same question here reads
        the same facts with the same values, so it gets the same answer. Not when
        the selector config reads the environment (a variable such as
        ``VLLM_BATCH_INVARIANT`` set): the first question of a configuration then
        reads what the others do not."""
        self._known = list(other.members.values())[:1]
        if not (self.selector.config_reads_environment or other.selector.config_reads_environment):
            self._donor = (other, frozenset(differing))

    def asked(self) -> dict[QuestionKey, ProbeAnswer]:
        """The answers that hold whatever was asked before (no evaluator limit hit)."""
        return {key: found for key, found in self._answers.items() if found.portable}

    def adopt(self, answers: dict[QuestionKey, ProbeAnswer], guessed: Collection[str]) -> None:
        """Take answers asked by another process on the same tree and machine (see
        :mod:`.selector_parallel`), where the machine facts ``guessed`` were
        guessed: the questions they answer are not asked here."""
        for key, found in answers.items():
            if key not in self._answers:
                self._adopted[key] = found
        self._guessed_there |= set(guessed)

    def answer(self, backend: str, config: Config) -> ProbeAnswer | None:
        """What this prober answered for ``backend`` and ``config``, if it was asked."""
        return self._answers.get((backend, config.key()))

    @property
    def priority_params(self) -> list[str]:
        """The configuration fields the priority list can depend on (capability aside)."""
        args = self.function.node.args
        names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
        fields = Config.__dataclass_fields__
        return [n for n in names if n in fields]

    def priorities(self, config: Config) -> list[str]:
        """The names ``_get_backend_priorities`` returns for ``config``."""
        key = config.key()
        kept = self._lists.get(key)
        if kept is None:
            kept = self._lists[key] = self._ask_priorities(config)
        names, facts = kept
        self.read.update(facts)
        return list(names)

    def _ask_priorities(self, config: Config) -> tuple[list[str], list[tuple[str, str]]]:
        interp = self.interp
        with (
            self.selector.model(config),
            interp.question(capability=config.capability_tuple, steps=STEPS_PER_DECISION) as q,
        ):
            selector_config = self.selector.build_config(config)
            kwargs: dict[str, Any] = {}
            if CAPABILITY_PARAM in param_names(self.function.node):
                kwargs[CAPABILITY_PARAM] = self.selector.device_capability(config)
            for name in self.priority_params:
                if name == "num_heads":
                    kwargs[name] = config.num_heads
                else:
                    kwargs[name] = interp.getattr(selector_config, name, NODE, "")
            result = interp.call(self.function, [], kwargs, NODE, self.module.path)
        names = []
        for member in result:
            if isinstance(member, EnumMember):
                self.members.setdefault(member.name, member)
                names.append(member.name)
        return names, q.facts

    def reasons(self, backend: str, config: Config) -> tuple[str, ...]:
        """Why ``backend`` rejects ``config`` (empty: it accepts it), as vLLM words it."""
        key = (backend, config.key())
        found = self._answers.get(key)
        if found is None:
            found = self._answers[key] = (
                self._lent(backend, config)
                or self._taken(key)
                or self._on_other_gpu(backend, config)
                or self._ask(backend, config)
            )
        self.read.update(found.facts)
        return found.reasons

    def _on_other_gpu(self, backend: str, config: Config) -> ProbeAnswer | None:
        """An answer asked on another GPU whose calls that looked at the GPU answer
        alike on this one (:mod:`.gpu_reads`): the question takes the same path here."""
        candidates = self._observed.get((backend, _without_gpu(config)))
        if not candidates:
            return None
        interp = self.interp
        try:
            with (
                self.selector.model(config),
                interp.question(capability=config.capability_tuple, steps=STEPS_PER_DECISION),
            ):
                gpu = self.selector.device_capability(config)
                for observed, found in candidates:
                    if replay(interp, observed, gpu):
                        self.member(backend)  # (as asking would)
                        self.from_other_gpus += 1
                        return found
        except (Unknown, Raised):
            pass
        return None

    def _lent(self, backend: str, config: Config) -> ProbeAnswer | None:
        """The donor's answer, where it read none of the facts set otherwise here."""
        if self._donor is None:
            return None
        donor, differing = self._donor
        found = donor.answer(backend, config)
        if found is None or not found.portable or found.read & differing:
            return None
        self.member(backend)  # (as asking would: a backend this tree lacks is a KeyError)
        machine, theirs = machine_of(self.interp), machine_of(donor.interp)
        machine.guessed |= found.read & theirs.guessed  # guessed alike: the same facts
        return found

    def _taken(self, key: QuestionKey) -> ProbeAnswer | None:
        """An adopted answer, as asking it here would have left the machine (the
        facts it read that were guessed there are guessed here)."""
        found = self._adopted.pop(key, None)
        if found is not None:
            machine_of(self.interp).guessed |= found.read & self._guessed_there
        return found

    def member(self, backend: str) -> EnumMember:
        """The enum member named ``backend`` (as a priority list gave it, else the
        registry enum's own: a table built for another setting of the machine asks
        backends its own lists have not named yet)."""
        found = self.members.get(backend)
        if found is None:
            for member in self._known:
                module = member.cls.module
                enum = self.interp.module(module.dotted)
                cls = enum.lookup(member.cls.name, self.interp, NODE) if enum else None
                value = self.interp.class_own_attr(cls, backend) if cls is not None else None
                if isinstance(value, EnumMember):
                    found = self.members[backend] = value
                    break
            else:
                raise KeyError(backend)
        return found

    def _ask(self, backend: str, config: Config) -> ProbeAnswer:
        """``backend``'s reasons asked in full, noting for other GPUs the calls
        through which the answer looked at the GPU."""
        interp = self.interp
        saved, interp.gpu_observer = interp.gpu_observer, GpuReads(interp)
        try:
            found = self._asked(backend, config)
            observed = interp.gpu_observer.observed()
        finally:
            interp.gpu_observer = saved
        self.asked_in_full += 1
        if found.portable and observed is not None:
            kept = self._observed.setdefault((backend, _without_gpu(config)), [])
            if len(kept) < MAX_OBSERVED:
                kept.append((observed, found))
        return found

    def _asked(self, backend: str, config: Config) -> ProbeAnswer:
        interp = self.interp
        member = self.member(backend)
        saved = self.module.values.get(PRIORITY_FUNCTION)
        self.module.values[PRIORITY_FUNCTION] = Builtin(
            PRIORITY_FUNCTION, lambda it, args, kw, node, path: [member]
        )
        skipped = len(interp.skipped_checks)
        question: Question | None = None
        facts: dict[str, str] = {}
        limited = False
        try:
            with (
                self.selector.model(config),
                interp.question(
                    capability=config.capability_tuple, steps=STEPS_PER_DECISION
                ) as question,
            ):
                reasons = self._reasons(backend, config)
            facts.update(question.facts)
        except Unknown as exc:
            reasons = (f"{NOT_EVALUATED}{exc}",)
            limited = isinstance(exc, LimitExceeded)
        except Raised as exc:
            reasons = (f"{NOT_EVALUATED}{exc.kind}: {exc.message}",)
        finally:
            if saved is None:
                self.module.values.pop(PRIORITY_FUNCTION, None)
            else:
                self.module.values[PRIORITY_FUNCTION] = saved
        read = frozenset(name for name, _ in question.facts) if question else frozenset()
        limited |= any(isinstance(e, LimitExceeded) for e in interp.skipped_checks[skipped:])
        portable = question is not None and not limited
        return ProbeAnswer(reasons, facts, read, portable)

    def _reasons(self, backend: str, config: Config) -> tuple[str, ...]:
        """The reasons of ``backend``, inside the question: from its check alone
        where that is known to answer alike (:mod:`.selector_passthrough`), else
        from the platform's own loop."""
        method, kwargs = self.selector.valid_backends_call(config)
        if not isinstance(method, Bound):
            raise Unknown("get_valid_backends is not a method", self.module.path)
        through = self._through
        if through is None:
            return self._reasons_in(backend, method, kwargs)
        interp = self.interp
        steps, skipped = interp.budget.steps, len(interp.skipped_checks)
        found = through.answer(backend, config, method, kwargs)
        if found is not None:
            return found
        interp.budget.steps = steps
        del interp.skipped_checks[skipped:]
        with through.recording(backend, config) as answered:
            reasons = self._reasons_in(backend, method, kwargs)
            answered(reasons)
        return reasons

    def _reasons_in(self, backend: str, method: Bound, kwargs: dict[str, Any]) -> tuple[str, ...]:
        """The reasons of ``backend`` from the platform's own loop (``method`` called
        with ``kwargs``), inside the question."""
        interp = self.interp
        target = method.target
        if method.func.kind == "classmethod" and isinstance(target, Instance | EnumMember):
            target = target.cls
        # not through the call memo: the answer depends on the stand-in list
        result = interp.run_function(method.func, [target], kwargs)
        decision = read_valid_backends(result, method.func.path)
        if decision.selected:
            return ()
        if not decision.priorities:  # (ROCm: ROCM_ATTN for an encoder-decoder model)
            return (LEFT_OUT,)
        if backend in decision.unknown:
            return (f"{NOT_EVALUATED}{decision.unknown[backend]}",)
        return tuple(decision.rejected.get(backend, ()))


def _without_gpu(config: Config) -> tuple[object, ...]:
    """``config``'s key without its GPU (the capability)."""
    return tuple(v for name, v in vars(config).items() if name != "capability")


__all__ = ["LEFT_OUT", "ProbeAnswer", "Prober", "QuestionKey"]
