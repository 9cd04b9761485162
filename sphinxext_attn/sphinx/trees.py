"""Which vLLM tree a build reads: the configured one (a folder, or ``vllm==VERSION``
fetched once), a directive's ``:root:`` or a named tree, else an installed ``vllm``;
the plugins and engine options configured beside it are checked against that tree.

Apart from :mod:`.config` (the settings themselves and their checks) so that
reading the tree and its plugins has a home of its own.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from sphinx.util import logging

from sphinxext_attn.analysis.plugin_release import release_mismatches
from sphinxext_attn.model.environment import as_text, known_platforms
from sphinxext_attn.selection.option_fields import OptionError, check_options
from sphinxext_attn.source.fetch import RELEASE_ROOT, FetchError, cache_dir, fetch
from sphinxext_attn.source.locate import installed_vllm_root
from sphinxext_attn.source.plugin_platforms import read_plugins
from sphinxext_attn.source.plugins import PluginError
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.sphinx.build_state import state_of
from sphinxext_attn.sphinx.cache import FilePlace
from sphinxext_attn.sphinx.config import (
    CONFIG_NAME,
    HOW_TO_SET,
    OPTIONS_NAME,
    PLATFORM_NAME,
    PLUGINS_NAME,
    TREES_NAME,
)

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

logger = logging.getLogger(__name__)


def config_root(app: Sphinx) -> str | None:
    """The configured tree (relative to the conf dir; ``vllm==VERSION``: that release,
    fetched into the cache once), else an installed vllm's."""
    value = getattr(app.config, CONFIG_NAME, None)
    release = RELEASE_ROOT.match(value) if isinstance(value, str) else None
    if release:
        return fetched_root(app, release.group("version"))
    if value:
        return os.path.normpath(os.path.join(app.confdir, os.fspath(value)))
    return installed_vllm_root()


def fetched_root(app: Sphinx, version: str) -> str | None:
    """``attention_backends_root = "vllm==VERSION"``: the release's tree, fetched once
    per build (a tree in the cache is reused); an error naming the setting if not."""
    state = state_of(app.env)
    key = f"{cache_dir()}:{version}"
    if key in state.fetched and os.path.isdir(state.fetched[key]):
        return state.fetched[key]

    try:
        tree = str(fetch(version))
    except (FetchError, ValueError) as err:
        conf_py = os.path.join(app.confdir, "conf.py") if app.confdir else None
        logger.error(
            f"{CONFIG_NAME} = 'vllm=={version}': cannot fetch the release: {err}; "
            "the tables are left out (set a folder holding vllm/ to build offline)",
            location=FilePlace(conf_py) if conf_py and os.path.isfile(conf_py) else None,
            type="attention_backends",
            subtype="config",
        )
        state.bad_root = True
        return None
    state.fetched[key] = tree
    return tree


def resolve_for_build(app: Sphinx) -> None:
    """Resolve the configured tree once per build; directives read it from the env."""
    app.env.attention_backends_root = root = config_root(app)  # type: ignore[attr-defined]
    read_configured_plugins(app)
    options = getattr(app.config, OPTIONS_NAME, None)
    if root and options and os.path.isdir(os.path.join(root, "vllm")):
        try:
            values = {k: as_text(v) for k, v in options.items()}
            state = state_of(app.env)
            tree = SourceTree(root, state.phase.shared_reads(root), plugins=state.plugins_of(root))
            check_options(root, values, OPTIONS_NAME, tree)
        except OptionError as err:
            conf_py = os.path.join(app.confdir, "conf.py") if app.confdir else None
            logger.error(
                f"{err}; using no engine options",
                location=FilePlace(conf_py) if conf_py and os.path.isfile(conf_py) else None,
                type="attention_backends",
                subtype="config",
            )
            setattr(app.config, OPTIONS_NAME, {})
    trees = getattr(app.config, TREES_NAME, None) or {}
    app.env.attention_backends_trees = {  # type: ignore[attr-defined]
        str(name): os.path.normpath(os.path.join(app.confdir, os.fspath(path)))
        for name, path in trees.items()
        if path
    }


def read_configured_plugins(app: Sphinx) -> None:
    """``attention_backends_plugins`` read as the plugins of the configured tree, kept
    by the build (:attr:`.BuildState.plugins`: each build states its own, none
    configured, none read); a folder holding no plugin, or a platform no plugin
    brings, is one error naming the setting."""
    root = app.env.attention_backends_root  # type: ignore[attr-defined]
    if not root:
        return
    folders = [
        os.path.normpath(os.path.join(app.confdir, os.fspath(f)))
        if os.path.isdir(os.path.join(app.confdir, os.fspath(f)))
        else os.fspath(f)
        for f in getattr(app.config, PLUGINS_NAME, None) or []
    ]
    try:
        plugins = read_plugins(root, folders)
    except PluginError as exc:
        logger.error(f"{PLUGINS_NAME}: {exc}", type="attention_backends", subtype="config")
        plugins = read_plugins(root, [])
    state_of(app.env).plugins = {os.path.realpath(root): plugins} if plugins else {}
    for message in release_mismatches(root, plugins) if folders else []:
        logger.warning(message, type="attention_backends", subtype="plugin")
    platform = getattr(app.config, PLATFORM_NAME, "cuda")
    if platform not in known_platforms(plugins):
        logger.error(
            f"{PLATFORM_NAME} = {platform!r} is not valid: it accepts one of "
            f"{', '.join(known_platforms(plugins))}; using the default, 'cuda'",
            type="attention_backends",
            subtype="config",
        )
        app.config[PLATFORM_NAME] = "cuda"


def build_root(env: BuildEnvironment) -> str | None:
    return getattr(env, "attention_backends_root", None)


def directive_root(value: str, docdir: str) -> str:
    """A ``:root:`` option: absolute, or relative to the directory of the page."""
    return os.path.normpath(os.path.join(docdir, os.path.expanduser(value)))


def warn_no_root(env: BuildEnvironment) -> None:
    """The one warning per build that says how to name the tree."""
    state = state_of(env)
    if not state.warned_no_root and not state.bad_root:
        state.warned_no_root = True
        logger.warning(HOW_TO_SET, type="attention_backends", subtype="config")


def named_tree(env: BuildEnvironment, name: str) -> str | None:
    """A tree of ``attention_backends_trees`` by name (resolved against the conf dir)."""
    trees: dict[str, str] = getattr(env, "attention_backends_trees", None) or {}
    return trees.get(name)
