"""How a unit of the runtime profile runs and is kept (see :mod:`.units`).

A :class:`Runner` runs a unit's page work and evaluator work, each recorded on
its own tree (the two share their parsing), and keeps the result, a
:class:`Done` with every path it read and the views of each file it rested on
(``source/views.py``: which statements, the outline, ...), in a
:class:`UnitStore` between runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from sphinxext_attn.model.environment import Environment
from sphinxext_attn.model.records import Diagnostic
from sphinxext_attn.source.recording import Recording
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.source.views import View


class UnitStore(Protocol):
    """Where unit results are kept between runs (see ``cli/runcache.py``)."""

    def get(self, key: str) -> Done | None: ...

    def put(self, key: str, done: Done) -> None:
        """Keep ``done`` while the views of each file it read (:attr:`Done.views`,
        and the presence of :attr:`Done.paths`) are unchanged."""


@dataclass
class Done:
    """A unit's result with what it read: paths, warnings (page reader's and evaluator's)."""

    value: Any
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


class Runner:
    """Runs units on a page tree and an evaluator tree that share their parsing."""

    def __init__(
        self,
        root: str,
        environment: Environment,
        store: UnitStore | None,
        source: SourceTree | None = None,
    ) -> None:
        self.page = source if source is not None else SourceTree(root)
        self.evaluator = SourceTree(self.page.root)
        self.evaluator.share_parsing(self.page)
        self.environment = environment
        self.store = store
        #: keys of the units computed (not taken from the store) in this run
        self.computed: list[str] = []
        #: backends' answers asked of one interpreter (see :meth:`interpreter`)
        self.shared = False
        self._interp: Any = None
        #: every path the units answered on the shared interpreter read so far
        self._chain: dict[str, None] = {}
        #: and the views of the files they read
        self._chain_views: dict[str, set[View]] = {}

    def interpreter(self) -> Any:
        """The evaluator for a backend's answers: a fresh one per unit, or, when
        :attr:`shared`, one for all (modules evaluated once). What a shared
        interpreter remembers was read by the units before: each unit is then
        kept as reading their files too, a superset of its own (never stale)."""
        from sphinxext_attn.knowledge.machine import Machine
        from sphinxext_attn.pyeval import Interpreter

        if not self.shared:
            return Interpreter(self.evaluator, Machine(self.environment))
        if self._interp is None:
            self._interp = Interpreter(self.evaluator, Machine(self.environment))
        return self._interp

    def cached(self, key: str) -> Done | None:
        found = self.store.get(key) if self.store is not None else None
        return found if isinstance(found, Done) else None

    def run(self, key: str, page_work: Any, evaluator_work: Any = None) -> Done:
        """``page_work(tree)`` and ``evaluator_work(tree)`` (either may be None), each
        recorded on its tree; kept in the store with every path they read."""
        found = self.cached(key)
        if found is not None:
            return found
        done = self.compute(page_work, evaluator_work)
        self.keep(key, done)
        return done

    def compute(
        self, page_work: Any, evaluator_work: Any = None, answers_first: bool = False
    ) -> Done:
        """Both works (see :meth:`run`); ``answers_first``: the evaluator's first, its
        answer passed to ``page_work(tree, answer)`` (the page reads what it lacks)."""
        values: list[Any] = [None, None]
        records: dict[int, Recording] = {}
        both = ((self.page, page_work), (self.evaluator, evaluator_work))
        for i in (1, 0) if answers_first else (0, 1):
            tree, work = both[i]
            with tree.recording() as record:
                if work is None:
                    pass
                elif answers_first and i == 0:
                    values[0] = work(tree, values[1][0] if values[1] else None)
                else:
                    values[i] = work(tree)
            records[i] = record
        page, evaluator = records[0], records[1]
        paths = list(dict.fromkeys([*page.paths, *evaluator.paths]))
        views: dict[str, set[View]] = {}
        for record in (page, evaluator):
            for rel, seen in record.views.items():
                views.setdefault(rel, set()).update(seen)
        if self.shared and evaluator_work is not None:
            self._chain.update(dict.fromkeys(paths))
            paths = list(self._chain)
            for rel, seen in views.items():
                self._chain_views.setdefault(rel, set()).update(seen)
            views = self._chain_views
        return Done(
            (values[0], values[1][0] if values[1] else None),
            paths,
            page.diagnostics,
            evaluator.diagnostics,
            page.partly,
            list(page.whole),
            values[1][1] if values[1] else [],
            {rel: frozenset(seen) for rel, seen in views.items()},
        )

    def keep(self, key: str, done: Done) -> None:
        self.computed.append(key)
        if self.store is not None:
            self.store.put(key, done)
