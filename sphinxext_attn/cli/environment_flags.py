"""``--env``, ``--option``, ``--assume``, ``--platform`` and ``--arch``: what an answer
assumes about the world outside the tree (see :mod:`sphinxext_attn.model.environment`)."""

from __future__ import annotations

import argparse
import sys

from sphinxext_attn.model.environment import (
    PLATFORM_PATTERN,
    PLATFORMS,
    Environment,
    EnvironmentError_,
    environment_from,
    known_platforms,
    parse_assignments,
)
from sphinxext_attn.model.plugin import Plugins


def platform_name(text: str) -> str:
    name = text.strip().lower()
    if not PLATFORM_PATTERN.match(name):
        raise argparse.ArgumentTypeError(
            f"invalid platform {text!r} (choose from {', '.join(known_platforms())})"
        )
    return name


def check_platforms(names: list[str], plugins: Plugins = ()) -> None:
    """Each of ``names`` a platform vLLM or one of the run's ``plugins`` brings."""
    for name in names:
        if name not in known_platforms(plugins):
            raise EnvironmentError_(
                f"argument --platform: invalid platform {name!r} (choose from "
                f"{', '.join(known_platforms(plugins))}; a plugin's platform needs its "
                "--plugin DIR)"
            )


def platform_list(text: str) -> list[str]:
    """``rocm``, ``rocm,xpu`` or ``all`` (every platform); a bad name is argparse's
    one-line error naming the accepted ones."""
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    if names == ["all"]:
        return list(PLATFORMS)
    bad = [n for n in names if n not in PLATFORMS and not PLATFORM_PATTERN.match(n)]
    if bad or not names:
        raise argparse.ArgumentTypeError(
            f"invalid platform {text!r} (choose from {', '.join(PLATFORMS)}, all; "
            "comma-separated or repeated)"
        )
    return names


def page_platforms(args: argparse.Namespace) -> list[str]:
    """The platforms a page shows besides vLLM's own CUDA layout, in the order given."""
    given = getattr(args, "platform", None)
    if not isinstance(given, list):
        return [] if given in (None, "cuda") else [given]
    names = [n for group in given for n in group]
    return [n for n in dict.fromkeys(names) if n != "cuda"]


def add_environment_options(parser: argparse.ArgumentParser, many: bool = False) -> None:
    """``many``: ``--platform`` names the platforms of a page (repeatable, ``all``)."""
    group = parser.add_argument_group(
        "environment (default: the reference machine; see the docs' Environment page)"
    )
    group.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an environment variable, read as the tree's vllm/envs.py reads it "
        "(repeatable; default: none set, vLLM's defaults apply)",
    )
    group.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="an engine option, a VllmConfig field by dotted path, e.g. "
        "attention_config.flash_attn_version=2 (repeatable; default: VllmConfig() defaults)",
    )
    group.add_argument(
        "--assume",
        action="append",
        default=[],
        metavar="FACT=VALUE",
        help="a fact about the machine: installed.PACKAGE, network, which.TOOL, or a tree "
        "function's answer such as has_flashinfer_sm90_nope_mla=true (repeatable; default: "
        "the reference machine: pinned dependencies, no flashinfer-cubin, no network, nvcc)",
    )
    group.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder holding a vLLM platform plugin package (tpu_inference, vllm_ascend, "
        "...) or its installed distribution, read like vllm/ and never imported "
        "(repeatable; default: none)",
    )
    if many:
        group.add_argument(
            "--platform",
            action="append",
            type=platform_list,
            metavar="P[,P...]",
            help="the platforms the page shows: cuda (vLLM's page alone), rocm, xpu, cpu or "
            "all, comma-separated or repeated; each other than cuda adds its section (its "
            "selection and feature tables) after vLLM's layout, and only those are evaluated "
            "(default: cuda)",
        )
        return
    group.add_argument(
        "--platform",
        type=platform_name,
        default="cuda",
        help="the platform whose selection is described: cuda, rocm, xpu, cpu, tpu (with "
        "tpu_inference given by --plugin) or a plugin's (npu, hpu) (default: cuda)",
    )


def read_plugin_flags(args: argparse.Namespace, root: str) -> Plugins:
    """The plugins the ``--plugin`` folders hold, read as plugins of ``root``: the run
    hands them to its trees (every run states its own: none given, none read);
    :class:`EnvironmentError_` names a bad folder."""
    if not getattr(args, "plugin", None) and "sphinxext_attn.source.plugins" not in sys.modules:
        return ()  # no plugin given nor read: nothing to do (and no analysis module loaded)
    # lazy: the plugin readers cost 14 ms (-X importtime, median of 7); a kept page run
    # given no --plugin loads no source module but locate (tests/cli/test_runcache.py)
    from sphinxext_attn.source.plugin_platforms import read_plugins
    from sphinxext_attn.source.plugins import PluginError

    try:
        plugins = read_plugins(root, list(getattr(args, "plugin", None) or []))
    except PluginError as exc:
        raise EnvironmentError_(f"--plugin {exc}") from None
    if getattr(args, "plugin", None):
        # lazy: only a run given --plugin reads the releases; the analysis package is no
        # module of a kept run (tests/cli/test_runcache.py), 1.4 ms after the readers
        from sphinxext_attn.analysis.plugin_release import release_mismatches

        for message in release_mismatches(root, plugins):
            print(f"warning: {message}", file=sys.stderr)
    return plugins


def environment_of(args: argparse.Namespace, plugins: Plugins = ()) -> Environment:
    """The environment the flags ask for, on a platform of vLLM's or of the run's
    ``plugins``; :class:`EnvironmentError_` names a bad one."""
    platform = getattr(args, "platform", None)
    if isinstance(platform, str):
        check_platforms([platform], plugins)
    return environment_from(
        parse_assignments(args.env, "--env"),
        parse_assignments(args.option, "--option"),
        parse_assignments(args.assume, "--assume"),
        platform if isinstance(platform, str) else "cuda",
        getattr(args, "arch", "") or "",
        plugins=plugins,
    )


__all__ = [
    "read_plugin_flags",
    "EnvironmentError_",
    "add_environment_options",
    "environment_of",
    "page_platforms",
]
