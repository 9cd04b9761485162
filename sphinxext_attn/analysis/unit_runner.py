"""How a unit of the runtime profile runs and is kept (see :mod:`.units`).

A :class:`Runner` runs a unit's page work and evaluator work, each recorded on
its own tree (the two share their parsing), and keeps the result, a
:class:`Done` with every path it read and the views of each file it rested on
(``source/views.py``: which statements, the outline, ...), in a
:class:`UnitStore` between runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar, cast

from sphinxext_attn.analysis.unit_values import Answered
from sphinxext_attn.model.environment import Environment
from sphinxext_attn.model.plugin import Plugins
from sphinxext_attn.model.records import Diagnostic
from sphinxext_attn.source.recording import Recording
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.source.views import View

if TYPE_CHECKING:
    from sphinxext_attn.pyeval import Interpreter

P = TypeVar("P")
A = TypeVar("A")
P_co = TypeVar("P_co", covariant=True)
A_co = TypeVar("A_co", covariant=True)


class UnitStore(Protocol):
    """Where unit results are kept between runs (see ``cli/runcache.py``)."""

    def get(self, key: str) -> Kept | None: ...

    def put(self, key: str, done: Kept) -> None:
        """Keep ``done`` while the views of each file it read (:attr:`Done.views`,
        and the presence of :attr:`Done.paths`) are unchanged."""


@dataclass(frozen=True)
class Done(Generic[P_co, A_co]):
    """A unit's result with what it read: paths, warnings (page reader's and evaluator's)."""

    #: what the unit's page work gave (see :mod:`.unit_values`)
    page_value: P_co
    #: what its evaluator work answered
    answer: A_co
    paths: list[str] = field(default_factory=list)
    page: list[Diagnostic] = field(default_factory=list)
    evaluator: list[Diagnostic] = field(default_factory=list)
    partly: dict[str, tuple[int, int]] = field(default_factory=dict)
    whole: list[str] = field(default_factory=list)
    #: machine facts in the order the unit first read them (``NAME=VALUE``)
    facts: list[str] = field(default_factory=list)
    #: the views of each file the result rests on (see ``source/views.py``)
    views: dict[str, frozenset[View]] = field(default_factory=dict)

    def depends_on(self) -> list[str]:
        """Every file the result rests on: those looked at, those whose text counted."""
        return list(dict.fromkeys([*self.paths, *self.views]))


#: a unit's result, whatever its kind (its key says which)
Kept = Done[object, object]


def nothing(tree: SourceTree) -> None:
    """The page work of a unit that only asks the evaluator."""
    return None


def no_answer(tree: SourceTree) -> Answered[None]:
    """The evaluator work of a unit that only reads the page."""
    return Answered(None, [])


class Runner:
    """Runs units on a page tree and an evaluator tree that share their parsing."""

    def __init__(
        self,
        root: str,
        environment: Environment,
        store: UnitStore | None,
        source: SourceTree | None = None,
        plugins: Plugins = (),
    ) -> None:
        self.page = source if source is not None else SourceTree(root, plugins=plugins)
        self.evaluator = SourceTree(self.page.root, plugins=self.page.plugins)
        self.evaluator.share_parsing(self.page)
        self.environment = environment
        self.store = store
        #: keys of the units computed (not taken from the store) in this run
        self.computed: list[str] = []
        #: backends' answers asked of one interpreter (see :meth:`interpreter`)
        self.shared = False
        self._interp: Interpreter | None = None
        #: every path the units answered on the shared interpreter read so far
        self._chain: dict[str, None] = {}
        #: and the views of the files they read
        self._chain_views: dict[str, set[View]] = {}

    def interpreter(self) -> Interpreter:
        """The evaluator for a backend's answers: a fresh one per unit, or, when
        :attr:`shared`, one for all (modules evaluated once). What a shared
        interpreter remembers was read by the units before: each unit is then
        kept as reading their files too, a superset of its own (never stale)."""
        # the evaluator is imported on first use: a run whose units are all kept
        # never loads it (tests/cli/test_incremental.py). Measured: importing it (with
        # runtime.profile, priority_titles) after this module costs 47-76 ms, median
        # 65 ms of 7 byte-compiled runs on this 2-core machine under load
        from sphinxext_attn.knowledge.machine import Machine
        from sphinxext_attn.pyeval import Interpreter

        if not self.shared:
            return Interpreter(self.evaluator, Machine(self.environment))
        if self._interp is None:
            self._interp = Interpreter(self.evaluator, Machine(self.environment))
        return self._interp

    def cached(self, key: str) -> Kept | None:
        found = self.store.get(key) if self.store is not None else None
        return found if isinstance(found, Done) else None

    def run(
        self,
        key: str,
        page_work: Callable[[SourceTree], P],
        evaluator_work: Callable[[SourceTree], Answered[A]],
    ) -> Done[P, A]:
        """``page_work(tree)`` and ``evaluator_work(tree)`` (:func:`nothing`,
        :func:`no_answer`: none), each recorded on its tree; kept in the store with
        every path they read."""
        found = self.cached(key)
        if found is not None:
            return cast("Done[P, A]", found)  # a key names one kind of unit
        done = self.compute(page_work, evaluator_work)
        self.keep(key, done)
        return done

    def compute(
        self,
        page_work: Callable[[SourceTree], P],
        evaluator_work: Callable[[SourceTree], Answered[A]],
    ) -> Done[P, A]:
        """Both works (see :meth:`run`), the page's first."""
        with self.page.recording() as page:
            value = page_work(self.page)
        with self.evaluator.recording() as evaluator:
            answered = evaluator_work(self.evaluator)
        return self._done(value, answered, page, evaluator, evaluator_work is not no_answer)

    def compute_answers_first(
        self,
        page_work: Callable[[SourceTree, A], P],
        evaluator_work: Callable[[SourceTree], Answered[A]],
    ) -> Done[P, A]:
        """Both works, the evaluator's first: its answer is passed to
        ``page_work(tree, answer)`` (the page reads what it lacks)."""
        with self.evaluator.recording() as evaluator:
            answered = evaluator_work(self.evaluator)
        with self.page.recording() as page:
            value = page_work(self.page, answered.value)
        return self._done(value, answered, page, evaluator, True)

    def _done(
        self,
        value: P,
        answered: Answered[A],
        page: Recording,
        evaluator: Recording,
        asked: bool,
    ) -> Done[P, A]:
        """The result with every path and view both recordings saw (on a shared
        interpreter, ``asked``: those of every unit before too)."""
        paths = list(dict.fromkeys([*page.paths, *evaluator.paths]))
        views: dict[str, set[View]] = {}
        for record in (page, evaluator):
            for rel, seen in record.views.items():
                views.setdefault(rel, set()).update(seen)
        if self.shared and asked:
            self._chain.update(dict.fromkeys(paths))
            paths = list(self._chain)
            for rel, seen in views.items():
                self._chain_views.setdefault(rel, set()).update(seen)
            views = self._chain_views
        return Done(
            value,
            answered.value,
            paths,
            page.diagnostics,
            evaluator.diagnostics,
            page.partly,
            list(page.whole),
            answered.facts,
            {rel: frozenset(seen) for rel, seen in views.items()},
        )

    def keep(self, key: str, done: Done[P, A]) -> None:
        self.computed.append(key)
        if self.store is not None:
            self.store.put(key, done)
