"""Environment and build events: freshness, purge/merge, priming, the stylesheet.

Priming matters for parallel reads: the trees the pages need are analysed
(or taken from the environment) in the main process before Sphinx forks its
readers, so each file is read once and each diagnostic reported once.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from sphinx.util.fileutil import copy_asset_file

from sphinxext_attn.sphinx import cache, config

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

CSS_FILE = "attention_backends.css"
CSS_PATH = Path(__file__).resolve().parent.parent / CSS_FILE


def builder_inited(app: Sphinx) -> None:
    cache.new_build()
    config.new_build()
    config.resolve_for_build(app)
    if app.builder.format == "html":
        app.add_css_file(CSS_FILE)


def build_finished(app: Sphinx, exception: BaseException | None) -> None:
    if exception is None and app.builder.format == "html":
        copy_asset_file(CSS_PATH, Path(app.outdir, "_static"), force=True)


def _roots_in_use(env: BuildEnvironment) -> dict[str, set[str]]:
    """root -> docs whose tables come from it."""
    by_root: dict[str, set[str]] = {}
    for docname, roots in cache.env_docs(env).items():
        for root in roots:
            by_root.setdefault(root, set()).add(docname)
    return by_root


def get_outdated(
    app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]
) -> Iterable[str]:
    """Pages with tables from a tree whose files or listings changed (added files too)."""
    cache.new_read_phase()
    stale: set[str] = set()
    for root, docs in _roots_in_use(env).items():
        if cache.is_stale(env, root):
            stale |= docs
    return sorted(stale - removed)


def before_read_docs(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """In parallel builds, analyse the needed trees before the readers fork."""
    if app.parallel <= 1 or not docnames:
        return
    docs = cache.env_docs(env)
    roots: set[str] = set()
    for docname in docnames:
        roots |= docs.get(docname, set())
    if any(d not in docs for d in docnames):
        root = config.build_root(env)
        if root is None:
            config.warn_no_root()
        else:
            roots.add(cache.cache_key(root, config.profile(env)))
    for key in sorted(roots):
        root = cache.split_key(key)[0]
        cache.report(root, cache.get_analysis(env, key), strict=config.strict(env))


def purge_doc(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    cache.env_docs(env).pop(docname, None)


def merge_info(
    app: Sphinx, env: BuildEnvironment, docnames: Iterable[str], other: BuildEnvironment
) -> None:
    """Take the parallel reader's records of its pages and any tree it analysed."""
    mine, theirs = cache.env_docs(env), cache.env_docs(other)
    for docname in docnames:
        if docname in theirs:
            mine[docname] = set(theirs[docname])
    for root, entry in cache.env_cache(other).items():
        cache.env_cache(env).setdefault(root, entry)


def env_updated(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Forget analyses of trees no page uses any more."""
    used = set(_roots_in_use(env))
    cache_ = cache.env_cache(env)
    for root in [r for r in cache_ if r not in used]:
        del cache_[root]
    return []
