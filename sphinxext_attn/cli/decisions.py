"""Decisions for one tree: each configuration evaluated once, and kept between runs
while no file it was read from changes (:mod:`sphinxext_attn.cli.runcache`).

A file of cases is answered by two processes (decisions do not depend on the
order they are asked in); one configuration by this one alone.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sphinxext_attn.cli.checks import BadInput
from sphinxext_attn.cli.runcache import RunCache
from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.environment import REFERENCE, Environment
from sphinxext_attn.model.records import Diagnostic
from sphinxext_attn.model.selection import Config
from sphinxext_attn.parallel import forked
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.runtime.questions import kv_cache_dtypes
from sphinxext_attn.selection import inputs
from sphinxext_attn.selection.alternatives import alternatives
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.selection.fa_version import flash_attn_version, passed_version
from sphinxext_attn.selection.requested import check_backend, kinds, resolve_per_kind
from sphinxext_attn.source.tree import SourceTree

#: Decisions kept per tree between runs (the oldest are dropped beyond this).
MAX_KEPT_DECISIONS = 100_000
#: New cases below this are answered in this process alone (a fork costs more).
MIN_FORKED_CASES = 40


class Answers:
    """Decisions for one tree, evaluated once per configuration and kept between
    runs while no file they were read from changes (see :mod:`sphinxext_attn.cli.runcache`)."""

    def __init__(self, root: Path, cache: RunCache, environment: Environment = REFERENCE) -> None:
        self.root = root
        self.cache = cache
        self.environment = environment
        kept, self.paths = cache.load_entry("decisions", root, {}) or (None, [])
        self.known: dict[str, dict[str, Any]] = kept if isinstance(kept, dict) else {}
        #: made on the first configuration not kept (none: nothing new to store)
        self.tree: SourceTree | None = None
        #: one evaluator per environment (its answers rest on it), sharing the tree
        self.selectors: dict[str, Selector] = {}

    def decide(self, config: Config, environment: Environment | None = None) -> dict[str, Any]:
        """The decision for ``config`` in ``environment`` (default: the run's), with
        what would change it (:mod:`sphinxext_attn.selection.alternatives`)."""
        environment = environment or self.environment
        data = self.decide_plain(config, environment)
        if "alternatives" not in data:
            data["alternatives"] = alternatives(
                data, environment, lambda other: self.decide_plain(config, other)
            )
        return data

    def decide_plain(self, config: Config, environment: Environment) -> dict[str, Any]:
        """The decision alone (kept per configuration and environment)."""
        key = _key(config, environment)
        found = self.known.get(key)
        if found is not None:
            return found
        selector = self.selector(environment)
        data = selector.explain(selector.decide(config)).to_json()
        self.known[key] = data
        return data

    def selector(self, environment: Environment) -> Selector:
        """The evaluator of ``environment``'s answers, on this run's tree."""
        if self.tree is None:
            self.tree = SourceTree(self.root, plugins=self.cache.plugins)
        selector = self.selectors.get(environment.key())
        if selector is None:
            machine = Machine(environment)
            selector = self.selectors[environment.key()] = Selector(
                Interpreter(self.tree, machine)
            )
        return selector

    def check_kv_cache_dtype(self, config: Config) -> None:
        """``--kv-cache-dtype`` must be one of the release's ``CacheDType`` (a
        configuration decided before was checked then)."""
        if _key(config, self.environment) in self.known:
            return
        accepted = kv_cache_dtypes(self.selector(self.environment).interp)
        try:
            inputs.check_kv_cache_dtype(config.kv_cache_dtype, accepted)
        except ValueError as exc:
            raise BadInput(f"argument --kv-cache-dtype: {exc}") from None

    def check_backend(self, name: str | None, where: str) -> None:
        """A backend asked for must be one of the release's (``where``: the flag or
        the case key, for the one-line message)."""
        if name is None:
            return
        try:
            check_backend(self.selector(self.environment).interp, name)
        except ValueError as exc:
            raise BadInput(f"{where}: {exc}") from None

    def plugin_warnings(self) -> list[Diagnostic]:
        """The warnings about a plugin's files met answering (vLLM's own are the page's)."""
        tree = self.tree
        if tree is None or not tree.plugin_roots:
            return []
        return [
            d
            for d in tree.diagnostics
            if d.location and d.location.path.split("/", 1)[0] in tree.plugin_roots
        ]

    def flash_attn_version(self, config: Config, selected: str | None) -> int | None:
        """The FlashAttention version ``selected`` runs for ``config`` (kept as decisions are)."""
        key = f"{_key(config, self.environment)}|flash_attn_version"
        found = self.known.get(key)
        if found is None:
            interp = self.selector(self.environment).interp
            found = self.known[key] = {"version": flash_attn_version(interp, config, selected)}
        version = found.get("version")
        return version if isinstance(version, int) else None

    def per_kind_request(
        self, config: Config, backend: str | None, per_kind: dict[str, str]
    ) -> tuple[str | None, str]:
        """The backend asked for ``config``'s layer, and its KV-cache kind, as the
        release maps layers to kinds (``--backend KIND=NAME``)."""
        selector = self.selector(self.environment)
        accepted = kinds(selector.interp)
        if not accepted:
            raise BadInput(
                "argument --backend: KIND=NAME: this release has no per-kind backends "
                "(attention_config.backend_per_kind); give NAME alone"
            )
        for kind in per_kind:
            if kind not in accepted:
                raise BadInput(
                    f"argument --backend: {kind!r} is not a KV-cache kind of this release; "
                    f"choose from {', '.join(accepted)}"
                )
        return resolve_per_kind(selector, config, backend, per_kind)

    def flash_attn_source(self, selected: str | None) -> str:
        """Where ``selected``'s implementation passes its kernel a literal version."""
        if selected is None:
            return ""
        passed = passed_version(self.selector(self.environment).interp, selected)
        return passed[1] if passed else ""

    def decide_all(
        self, cases: Sequence[Config | tuple[Config, Environment]]
    ) -> list[dict[str, Any]]:
        """Every case's decision, in order: a configuration (in the run's environment)
        or a (configuration, environment) pair. Past the first new one (which
        readies the evaluator), a forked child answers the second half of the rest
        while this process answers the first: decisions do not depend on order."""
        pairs = [c if isinstance(c, tuple) else (c, self.environment) for c in cases]
        keys = [_key(c, e) for c, e in pairs]
        pending = list(dict.fromkeys(k for k in keys if k not in self.known))
        by_key = dict(zip(keys, pairs, strict=True))
        if pending:
            self.decide(*by_key[pending.pop(0)])
        if len(pending) >= MIN_FORKED_CASES and forked.can_fork():
            # Cases of one architecture and attention kind share their checks' memos:
            # grouping them keeps each process from repeating the other's work.
            pending.sort(key=lambda k: _locality(by_key[k][0]))
            half = len(pending) // 2
            theirs = pending[half:]
            child = forked.Forked(lambda: self._answer(theirs, by_key))
            for key in pending[:half]:
                self.decide(*by_key[key])
            got = child.result()
            if got is not None:
                decisions, paths = got
                self.known.update(zip(theirs, decisions, strict=True))
                self.paths = [*self.paths, *paths]  # what the child read counts too
        for key in pending:
            self.decide(*by_key[key])  # those the child did not answer; known: no cost
        return [self.known[k] for k in keys]

    def _answer(
        self, keys: list[str], by_key: dict[str, tuple[Config, Environment]]
    ) -> tuple[list[dict[str, Any]], list[str]]:
        decisions = [self.decide(*by_key[k]) for k in keys]
        tree = self.tree
        return decisions, [*tree.files, *tree.directories] if tree is not None else []

    def keep(self) -> None:
        """Store what this run evaluated with every file and folder read so far."""
        if self.tree is None:
            return
        known = self.known
        if len(known) > MAX_KEPT_DECISIONS:
            known = dict(list(known.items())[-MAX_KEPT_DECISIONS:])
        paths = [*self.paths, *self.tree.files, *self.tree.directories]
        self.cache.store("decisions", self.root, {}, known, paths)


def _key(config: Config, environment: Environment = REFERENCE) -> str:
    """A configuration (and what it assumes) as the key of its kept decision."""
    fields = {k: v for k, v in config.__dict__.items() if k != "selected_backend" or v}
    text = json.dumps(fields, sort_keys=True)
    return f"{text}|{environment.key()}" if not environment.is_reference() else text


def _locality(config: Config) -> tuple[str, bool, bool]:
    return config.capability, config.use_mla, config.use_sparse
