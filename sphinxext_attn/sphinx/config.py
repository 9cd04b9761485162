"""The ``attention_backends_*`` settings: registration and checking (where the tree
is: :mod:`.trees`).

Every setting is checked at ``config-inited``: a value of the wrong type or
shape is one error that names the setting, the value and what it accepts
(never a traceback), and the setting falls back to its default. The tree is
the configured one, a directive's ``:root:``, or an installed ``vllm``
(found by :mod:`sphinxext_attn.source.locate`, never imported).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from sphinx.application import Sphinx
from sphinx.util import logging

from sphinxext_attn.model.environment import (
    PLATFORM_PATTERN,
    REFERENCE,
    Environment,
    EnvironmentError_,
    check_setting,
    environment_from,
    known_platforms,
)
from sphinxext_attn.render.markdown import TEMPLATE_ERRORS
from sphinxext_attn.source.fetch import RELEASE_ROOT, VERSION
from sphinxext_attn.sphinx.build_state import start_build, state_of
from sphinxext_attn.sphinx.cache import FilePlace

if TYPE_CHECKING:
    from sphinx.config import Config
    from sphinx.environment import BuildEnvironment

logger = logging.getLogger(__name__)

CONFIG_NAME = "attention_backends_root"
SOURCE_URL_NAME = "attention_backends_source_url"
TREES_NAME = "attention_backends_trees"
PROFILE_NAME = "attention_backends_profile"
STRICT_NAME = "attention_backends_strict"
ENV_NAME = "attention_backends_env"
OPTIONS_NAME = "attention_backends_options"
ASSUME_NAME = "attention_backends_assume"
PLATFORM_NAME = "attention_backends_platform"
PLUGINS_NAME = "attention_backends_plugins"
PROFILES: tuple[str, ...] = ("runtime", "vllm-page")
HOW_TO_SET = (
    f"no vLLM source tree for the attention-backend tables: set {CONFIG_NAME} "
    "in conf.py to the folder that holds vllm/ (absolute, or relative to the conf "
    "dir), or install vllm; the tables are left out"
)

# -- checking ---------------------------------------------------------------------


def _path_like(value: object) -> bool:
    return isinstance(value, str | os.PathLike)


def _check_root(value: object) -> str | None:
    accepts = "a path (str or os.PathLike) to the folder holding vllm/, 'vllm==VERSION', or None"
    release = RELEASE_ROOT.match(value) if isinstance(value, str) else None
    if release and not VERSION.match(release.group("version")):
        return accepts + " (VERSION a release, such as 0.33.0)"
    if value is None or _path_like(value):
        return None
    return accepts


def _check_source_url(value: object) -> str | None:
    accepts = "None or a str template using only {path}, {line} and {version}"
    if value is None:
        return None
    if not isinstance(value, str):
        return accepts
    try:
        value.format(path="p", line=1, version="v")
    except TEMPLATE_ERRORS as err:
        return f"{accepts} (cannot fill it: {err!r})"
    return None


def _check_trees(value: object) -> str | None:
    accepts = "a dict mapping names (str) to tree paths (str or os.PathLike)"
    if not isinstance(value, dict):
        return accepts
    for name, path in value.items():
        if not isinstance(name, str) or not name:
            return f"{accepts}; the name {name!r} is not a non-empty str"
        if not _path_like(path) or not os.fspath(path):
            return f"{accepts}; {name!r} maps to {path!r}"
    return None


def _check_profile(value: object) -> str | None:
    if value in PROFILES:
        return None
    return "one of " + ", ".join(repr(p) for p in PROFILES)


def _check_strict(value: object) -> str | None:
    return None if isinstance(value, bool) else "True or False"


def _check_mapping(kind: str, name: str) -> Callable[[object], str | None]:
    """A dict of NAME -> value (str, int, float, bool) checked as ``environment_from`` checks."""
    accepts = "a dict mapping names (str) to values (str, int, float or bool)"

    def check(value: object) -> str | None:
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str | int | float | bool)
            for k, v in value.items()
        ):
            return accepts
        try:
            check_setting(kind, value, name)
        except EnvironmentError_ as err:
            return f"{accepts} ({err})"
        return None

    return check


def _check_platform(value: object) -> str | None:
    """vLLM's platforms, or a name a plugin's platform may have (checked against the
    plugins once they are read, see :func:`resolve_for_build`)."""
    if value in known_platforms() or (isinstance(value, str) and PLATFORM_PATTERN.match(value)):
        return None
    return (
        "one of "
        + ", ".join(repr(p) for p in known_platforms())
        + " or the device_name of a platform in attention_backends_plugins"
    )


def _check_plugins(value: object) -> str | None:
    accepts = "a list of folders (str or os.PathLike) holding a vLLM platform plugin package"
    if not isinstance(value, list | tuple):
        return accepts
    for item in value:
        if not _path_like(item) or not os.fspath(item):
            return f"{accepts}; {item!r} is not a path"
    return None


#: name -> (default, rebuild, Sphinx types, checker, description)
SETTINGS: dict[
    str, tuple[Any, Literal["env"], frozenset[type], Callable[[object], str | None], str]
] = {
    CONFIG_NAME: (
        None,
        "env",
        # no Sphinx type check: it takes pathlib.Path for a wrong type; _check_root checks
        frozenset(),
        _check_root,
        "The vLLM source tree (the folder holding vllm/).",
    ),
    SOURCE_URL_NAME: (
        None,
        "env",
        frozenset({str, type(None)}),
        _check_source_url,
        "Link template for table cells: {path}, {line}, {version}.",
    ),
    TREES_NAME: (
        {},
        "env",
        frozenset({dict}),
        _check_trees,
        "Named vLLM trees for :from:/:to: of attention-backends-diff.",
    ),
    PROFILE_NAME: (
        "runtime",
        "env",
        frozenset({str}),
        _check_profile,
        "How tables read the tree: 'runtime' (what the classes answer) or 'vllm-page'.",
    ),
    STRICT_NAME: (
        False,
        "env",
        frozenset({bool}),
        _check_strict,
        "Report problems of an unmodified vLLM release as warnings, not info.",
    ),
    ENV_NAME: (
        {},
        "env",
        frozenset({dict}),
        _check_mapping("env", ENV_NAME),
        "Environment variables the analysis evaluates with (vLLM's defaults for the rest).",
    ),
    OPTIONS_NAME: (
        {},
        "env",
        frozenset({dict}),
        _check_mapping("options", OPTIONS_NAME),
        "Engine options (VllmConfig fields by dotted path) over vLLM's defaults.",
    ),
    ASSUME_NAME: (
        {},
        "env",
        frozenset({dict}),
        _check_mapping("assume", ASSUME_NAME),
        "Facts about the machine (installed.PACKAGE, network, which.TOOL, a function).",
    ),
    PLATFORM_NAME: (
        "cuda",
        "env",
        frozenset({str}),
        _check_platform,
        "The platform whose selection the tables describe: cuda, rocm, xpu, cpu, tpu or a "
        "plugin's (npu, hpu).",
    ),
    PLUGINS_NAME: (
        [],
        "env",
        frozenset({list, tuple}),
        _check_plugins,
        "Folders holding a vLLM platform plugin package (tpu_inference, vllm_ascend), or "
        "an installed distribution's name; read like vllm/, never imported.",
    ),
}


def check_config(app: Sphinx, config: Config) -> None:
    """``config-inited``: one clear error per setting of the wrong type or shape.

    The error names the setting, the value and what it accepts, at ``conf.py``;
    the setting then falls back to its default (so the build goes on, and
    ``-W`` fails it). An error is logged rather than raised: Sphinx prints a
    traceback for any exception an extension raises.
    """
    state = start_build(app)
    conf_py = os.path.join(app.confdir, "conf.py") if app.confdir else None
    for name, (default, _rebuild, _types, check, _doc) in SETTINGS.items():
        value = getattr(config, name, default)
        accepts = check(value)
        if accepts is None:
            continue
        logger.error(
            f"{name} = {value!r} is not valid: it accepts {accepts}; "
            f"using the default, {default!r}",
            location=FilePlace(conf_py) if conf_py and os.path.isfile(conf_py) else None,
            type="attention_backends",
            subtype="config",
        )
        setattr(config, name, default)
        if name == CONFIG_NAME:
            state.bad_root = True  # that error is the one message: no "set it" warning


def register(app: Sphinx) -> None:
    """Register the settings; ``description=`` only where Sphinx takes it (7.4+)."""
    takes_description = "description" in inspect.signature(app.add_config_value).parameters
    for name, (default, rebuild, types, _check, doc) in SETTINGS.items():
        extra: dict[str, Any] = {"description": doc} if takes_description else {}
        app.add_config_value(name, default, rebuild, types=types, **extra)  # type: ignore[arg-type,unused-ignore]
    app.connect("config-inited", check_config)


# -- reading ------------------------------------------------------------------------


def _config(app_or_env: Sphinx | BuildEnvironment) -> Config:
    return app_or_env.config


def profile(app_or_env: Sphinx | BuildEnvironment) -> str:
    """The configured profile: ``"runtime"`` (default) or ``"vllm-page"``."""
    value = getattr(_config(app_or_env), PROFILE_NAME, "runtime")
    return value if value in PROFILES else "runtime"


def environment(app_or_env: Sphinx | BuildEnvironment) -> Environment:
    """What the configured analysis assumes (``attention_backends_env`` and friends)."""
    conf = _config(app_or_env)
    env = getattr(app_or_env, "env", None) if isinstance(app_or_env, Sphinx) else app_or_env
    try:
        return environment_from(
            getattr(conf, ENV_NAME, None),
            getattr(conf, OPTIONS_NAME, None),
            getattr(conf, ASSUME_NAME, None),
            getattr(conf, PLATFORM_NAME, "cuda"),
            plugins=state_of(env).every_plugin if env is not None else (),
        )
    except EnvironmentError_:  # reported at config-inited; the default was put back
        return REFERENCE


def strict(app_or_env: Sphinx | BuildEnvironment) -> bool:
    """Whether problems of an unmodified release are warnings (default: info)."""
    return getattr(_config(app_or_env), STRICT_NAME, False) is True
