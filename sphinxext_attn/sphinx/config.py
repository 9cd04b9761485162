"""Where the vLLM tree is: the config value, a `:root:` option, or an installed vllm.

An installed ``vllm`` is located with :func:`importlib.util.find_spec` on the
top-level name, which finds the package folder without executing it.
"""

from __future__ import annotations

import importlib.util
import os
from typing import TYPE_CHECKING

from sphinx.util import logging

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

logger = logging.getLogger(__name__)

CONFIG_NAME = "attention_backends_root"
SOURCE_URL_NAME = "attention_backends_source_url"
TREES_NAME = "attention_backends_trees"
HOW_TO_SET = (
    f"no vLLM source tree for the attention-backend tables: set {CONFIG_NAME} "
    "in conf.py to the folder that holds vllm/ (absolute, or relative to the conf "
    "dir), or install vllm; the tables are left out"
)

_warned: list[bool] = [False]


def new_build() -> None:
    _warned[0] = False


def register(app: Sphinx) -> None:
    app.add_config_value(
        CONFIG_NAME,
        None,
        "env",
        types=frozenset({str, os.PathLike, type(None)}),
        description="The vLLM source tree (the folder holding vllm/).",
    )
    app.add_config_value(
        SOURCE_URL_NAME,
        None,
        "env",
        types=frozenset({str, type(None)}),
        description="Link template for table cells: {path}, {line}, {version}.",
    )
    app.add_config_value(
        TREES_NAME,
        {},
        "env",
        types=frozenset({dict}),
        description="Named vLLM trees for :from:/:to: of attention-backends-diff.",
    )


def installed_vllm_root() -> str | None:
    """The folder holding an installed ``vllm`` package, without importing it."""
    try:
        spec = importlib.util.find_spec("vllm")
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    locations = list(spec.submodule_search_locations or [])
    if not locations and spec.origin:
        locations = [os.path.dirname(spec.origin)]
    for loc in locations:
        if os.path.isdir(loc):
            return os.path.dirname(os.path.abspath(loc))
    return None


def config_root(app: Sphinx) -> str | None:
    """The configured tree (relative to the conf dir), else an installed vllm's."""
    value = getattr(app.config, CONFIG_NAME, None)
    if value:
        return os.path.normpath(os.path.join(app.confdir, os.fspath(value)))
    return installed_vllm_root()


def resolve_for_build(app: Sphinx) -> None:
    """Resolve the configured tree once per build; directives read it from the env."""
    app.env.attention_backends_root = config_root(app)  # type: ignore[attr-defined]
    trees = getattr(app.config, TREES_NAME, None) or {}
    app.env.attention_backends_trees = {  # type: ignore[attr-defined]
        str(name): os.path.normpath(os.path.join(app.confdir, os.fspath(path)))
        for name, path in trees.items()
        if path
    }


def build_root(env: BuildEnvironment) -> str | None:
    return getattr(env, "attention_backends_root", None)


def directive_root(value: str, docdir: str) -> str:
    """A ``:root:`` option: absolute, or relative to the directory of the page."""
    return os.path.normpath(os.path.join(docdir, os.path.expanduser(value)))


def warn_no_root() -> None:
    """The one warning per build that says how to name the tree."""
    if not _warned[0]:
        _warned[0] = True
        logger.warning(HOW_TO_SET, type="attention_backends", subtype="config")


def named_tree(env: BuildEnvironment, name: str) -> str | None:
    """A tree of ``attention_backends_trees`` by name (resolved against the conf dir)."""
    trees: dict[str, str] = getattr(env, "attention_backends_trees", None) or {}
    return trees.get(name)
