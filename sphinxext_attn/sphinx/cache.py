"""One analysis per tree per build, kept on the environment between builds.

Freshness is decided by ``os.stat`` of every analysed file plus the listing
of every scanned directory, so a rebuild with no source change opens none of
the analysed files, and a file added next to the backends is noticed.

Two levels: the build's memo (:class:`~.build_state.BuildState`, shared by
every directive of a build and inherited by forked parallel readers) and
``env.attention_backends_cache`` (pickled with the environment, so the next
build starts warm).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from sphinx.util import logging

from sphinxext_attn.model.key import AnalysisKey
from sphinxext_attn.model.records import Analysis, Diagnostic
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.sphinx.build_state import Fingerprint, state_of

if TYPE_CHECKING:
    from sphinx.environment import BuildEnvironment

logger = logging.getLogger(__name__)

WARNING_TYPE = "attention_backends"

__all__ = ["Fingerprint"]


def source_tree(env: BuildEnvironment, root: str) -> SourceTree:
    """The parsed files of this read phase's analysis of ``root`` if it ran, else a
    tree sharing the phase's reads of ``root``."""
    state = state_of(env)
    found = state.phase.trees.get(root)
    if found is not None:
        return found
    return SourceTree(root, state.phase.shared_reads(root), plugins=state.plugins_of(root))


def _listing(path: Path) -> tuple[str, ...]:
    try:
        names = os.listdir(path)
    except OSError:
        return ("<missing>",)
    return tuple(sorted(n for n in names if n.endswith(".py") or "." not in n))


def fingerprint(root: str, analysis: Analysis) -> Fingerprint:
    """Stat (never open) every analysed file and list every scanned directory."""
    base = Path(root)
    files = []
    for rel in sorted(set(analysis.files)):
        try:
            st = os.stat(base / rel)
            files.append((rel, st.st_mtime_ns, st.st_size))
        except OSError:
            files.append((rel, -1, -1))
    scanned = set(analysis.directories) | {os.path.dirname(f) for f in analysis.files}
    dirs = tuple((d, _listing(base / d)) for d in sorted(scanned))
    return tuple(files), dirs


def analyze_tree(env: BuildEnvironment, key: AnalysisKey) -> Analysis:
    """Run the static analysis (a seam the tests can replace).

    A root without ``vllm/`` is one diagnostic, not one per file looked for.
    """
    # lazy: the analysis pipeline adds 26 ms to every Sphinx build, a rebuild with no
    # source change included (python -X importtime, median of 7)
    from sphinxext_attn.analysis import analyze

    root = key.root
    if not os.path.isdir(os.path.join(root, "vllm")):
        message = (
            f"no vllm/ package under {root}: point attention_backends_root or :root: "
            "at the folder that holds vllm/"
        )
        # the root's listing is the fingerprint: adding vllm/ makes it stale
        diag = Diagnostic(message, None, "root")
        return Analysis(root=root, directories=[""], diagnostics=[diag])
    state = state_of(env)
    tree = SourceTree(root, state.phase.shared_reads(root), plugins=key.plugins)
    if key.is_platform_part:  # another platform: only what the page shows
        known = _fresh_selection(env, key) if key.part == "features" else None
        return analyze(key, source=tree, known=known)
    state.phase.trees[root] = tree
    return analyze(key, source=tree)


def _fresh_selection(env: BuildEnvironment, key: AnalysisKey) -> Analysis | None:
    """This build's fresh analysis of the platform's lists, if one was made (a page's
    priority directive before its feature tables): its selection is not explored again."""
    found = state_of(env).analyses.get(key.with_part("lists"))
    if found is not None and fingerprint(key.root, found[1]) == found[0]:
        return found[1]
    return None


def env_cache(env: BuildEnvironment) -> dict[AnalysisKey, tuple[Fingerprint, Analysis]]:
    cache = getattr(env, "attention_backends_cache", None)
    if cache is None:
        cache = {}
        env.attention_backends_cache = cache  # type: ignore[attr-defined]
    return cache


def env_docs(env: BuildEnvironment) -> dict[str, set[AnalysisKey]]:
    """docname -> the analyses its tables come from."""
    docs = getattr(env, "attention_backends_docs", None)
    if docs is None:
        docs = {}
        env.attention_backends_docs = docs  # type: ignore[attr-defined]
    return docs


def get_analysis(env: BuildEnvironment, key: AnalysisKey) -> Analysis:
    """The analysis ``key`` asks for: the build's memo, then environment, then a fresh run."""
    root = key.root
    state = state_of(env)
    checked = key in state.phase.checked
    for candidate in (state.analyses.get(key), env_cache(env).get(key)):
        if candidate is not None and (checked or fingerprint(root, candidate[1]) == candidate[0]):
            break
    else:
        analysis = analyze_tree(env, key)
        candidate = (fingerprint(root, analysis), analysis)
    # Stat the files once per read phase, not once per directive.
    state.phase.checked.add(key)
    state.analyses[key] = env_cache(env)[key] = candidate
    return candidate[1]


def is_stale(env: BuildEnvironment, key: AnalysisKey) -> bool:
    """Whether the stored analysis ``key`` names no longer matches the tree."""
    stored = env_cache(env).get(key)
    return stored is None or fingerprint(key.root, stored[1]) != stored[0]


class FilePlace(str):
    """A warning location that is a file path, with or without a line.

    Sphinx reads a location string without ``:`` as a docname (and appends the
    source suffix); this one claims a ``:`` so it is printed as it is:
    ``path: WARNING`` without a line, ``path:12: WARNING`` with one.
    """

    __slots__ = ()

    def __contains__(self, item: object) -> bool:
        return item == ":" or str.__contains__(self, item)  # type: ignore[operator]

    def __reduce__(self) -> tuple[type[FilePlace], tuple[str]]:
        return (FilePlace, (str(self),))


def place(path: str, line: int = 0) -> FilePlace:
    return FilePlace(f"{path}:{line}" if line else path)


def report(
    env: BuildEnvironment,
    root: str,
    analysis: Analysis,
    where: str | None = None,
    *,
    strict: bool = False,
) -> None:
    """Each diagnostic of the tree is logged once per build, at its file and line.

    A diagnostic with no place in the tree (no ``vllm/`` under the root) is put
    at ``where``, the first page and line that asked for the tree. Problems of
    an unmodified release (``Diagnostic.release``) are info unless ``strict``.
    """
    emitted = state_of(env).emitted
    for diag in analysis.diagnostics:
        key = (root, diag)
        if key in emitted:
            continue
        emitted.add(key)
        location: str | None = where
        if diag.location is not None:
            location = place(os.path.join(root, diag.location.path), diag.location.line)
        if diag.release and not strict:
            logger.info(
                f"{diag.message} (not analysed; a problem of the release, "
                "a warning with attention_backends_strict = True)",
                location=location,
            )
            continue
        logger.warning(diag.message, location=location, type=WARNING_TYPE, subtype=diag.subtype)


def not_analysed(analysis: Analysis) -> list[tuple[str, str]]:
    """(registry name, why) of each entry a problem of the release left without a
    row (a built row with cells not evaluated is :func:`not_evaluated`'s)."""
    built = {row.name for row in analysis.backends}
    out = []
    for diag in analysis.diagnostics:
        if diag.release and diag.subtype != "unknown":
            name, _, why = diag.message.partition(": ")
            if name not in built:
                out.append((name, why or diag.message))
    return out


def not_evaluated(analysis: Analysis) -> list[tuple[str, str, str, bool]]:
    """(backend, column, why, is MLA) of each cell of a built row shown as ``?``."""
    seen: set[tuple[str, str]] = set()
    out = []
    for row in analysis.backends:
        for column, why in row.unknown.items():
            if (row.name, column) not in seen:
                seen.add((row.name, column))
                out.append((row.name, column, why, row.is_mla))
    return out
