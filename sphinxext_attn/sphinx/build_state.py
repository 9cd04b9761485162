"""What the Sphinx glue keeps for one build, in one object the build owns.

A :class:`BuildState` is made when the build starts (``config-inited``, the first
event, when the configured root is checked) and kept on the build environment
from ``builder-inited`` on (:func:`state_of`), so everything it holds ends with
the build: a second build in the same process (tests, a server rebuilding)
starts empty and reports its diagnostics again. It pickles empty, so the
environment Sphinx saves, and the one a parallel reader sends back, carry none
of it (what outlives a build is the environment's own cache, :mod:`.cache`).
Forked readers inherit it as it was when they forked (trees parsed, tables
built before, see ``events.before_read_docs``).

The per-read-phase part (:class:`ReadPhase`) is replaced at ``env-get-outdated``:
each read phase checks the trees against their files again.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from sphinxext_attn.model.environment import Environment
from sphinxext_attn.model.key import AnalysisKey
from sphinxext_attn.model.plugin import Plugins
from sphinxext_attn.model.records import Analysis, Diagnostic

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

    from sphinxext_attn.selection.decision import Selector
    from sphinxext_attn.selector.table import SelectorTable
    from sphinxext_attn.source.tree import SourceTree

#: ((path, mtime_ns, size) per file, (dir, python names) per directory)
Fingerprint = tuple[tuple[tuple[str, int, int], ...], tuple[tuple[str, tuple[str, ...]], ...]]

#: the attribute of the application (until ``builder-inited``) and of the environment
#: that holds the build's state
STATE = "attention_backends_state"


class ReadPhase:
    """What one read phase shares between directives (and both profiles)."""

    def __init__(self) -> None:
        #: analyses checked against their files in this phase
        self.checked: set[AnalysisKey] = set()
        #: root -> the SourceTree its fresh analysis parsed (shared with the selection)
        self.trees: dict[str, SourceTree] = {}
        #: a selector per tree and environment, on those parsed files
        self.selectors: dict[AnalysisKey, Selector] = {}
        #: root -> raw file bytes read (both profiles open a file once)
        self.reads: dict[str, dict[str, bytes]] = {}

    def shared_reads(self, root: str) -> dict[str, bytes]:
        return self.reads.setdefault(root, {})


class BuildState:
    """The build's memos and what it has reported (see the module)."""

    def __init__(self) -> None:
        #: analyses made or checked in this build, with the fingerprint they rest on
        self.analyses: dict[AnalysisKey, tuple[Fingerprint, Analysis]] = {}
        #: selector tables of this build, by :func:`~.selector.table_key`
        self.selector_tables: dict[str, tuple[Fingerprint, SelectorTable]] = {}
        #: diagnostics reported, with their tree's root (each once per build)
        self.emitted: set[tuple[str, Diagnostic]] = set()
        #: source-URL templates found bad (each warned about once)
        self.bad_templates: set[str] = set()
        #: ``vllm==VERSION`` trees fetched (by cache folder and version)
        self.fetched: dict[str, str] = {}
        #: the configured root failed (already an error: no "set it" warning)
        self.bad_root = False
        #: the "set the root" warning was given
        self.warned_no_root = False
        #: real path of the configured root -> the plugins configured for it (read when
        #: the build starts, see ``trees.read_configured_plugins``)
        self.plugins: dict[str, Plugins] = {}
        self.phase = ReadPhase()

    def plugins_of(self, root: str) -> Plugins:
        """The plugins this build reads with the tree at ``root`` (any path to it)."""
        return self.plugins.get(os.path.realpath(root), ()) if self.plugins else ()

    @property
    def every_plugin(self) -> Plugins:
        """The plugins this build read, with any tree (their platforms may be named)."""
        return tuple(plugin for plugins in self.plugins.values() for plugin in plugins)

    def key(
        self, root: str, profile: str, environment: Environment, part: str = ""
    ) -> AnalysisKey:
        """The key of an analysis of ``root`` in this build (with its plugins)."""
        return AnalysisKey(root, profile, environment, part, plugins=self.plugins_of(root))

    def new_read_phase(self) -> None:
        """Check every tree against its files again (once) before pages are read."""
        self.phase = ReadPhase()

    def __reduce__(self) -> tuple[type[BuildState], tuple[()]]:
        return (BuildState, ())


def start_build(app: Sphinx) -> BuildState:
    """A new state for the build ``app`` starts (``config-inited``): the environment
    takes it at ``builder-inited`` (:func:`hand_to_env`)."""
    state = BuildState()
    setattr(app, STATE, state)
    return state


def hand_to_env(app: Sphinx) -> BuildState:
    """``builder-inited``: the state the build started with now lives on its environment."""
    state = getattr(app, STATE, None)
    if not isinstance(state, BuildState):
        state = BuildState()
    setattr(app.env, STATE, state)
    return state


def state_of(env: BuildEnvironment) -> BuildState:
    """The state of the build ``env`` belongs to (an environment made without
    ``builder-inited``, as in some tests, gets one of its own)."""
    state = getattr(env, STATE, None)
    if not isinstance(state, BuildState):
        state = BuildState()
        setattr(env, STATE, state)
    return state
