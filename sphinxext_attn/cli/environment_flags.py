"""``--env``, ``--option``, ``--assume``, ``--platform`` and ``--arch``: what an answer
assumes about the world outside the tree (see :mod:`sphinxext_attn.model.environment`)."""

from __future__ import annotations

import argparse

from sphinxext_attn.model.environment import (
    PLATFORMS,
    Environment,
    EnvironmentError_,
    environment_from,
    parse_assignments,
)


def add_environment_options(parser: argparse.ArgumentParser) -> None:
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
        "--platform",
        choices=PLATFORMS,
        default="cuda",
        help="the platform whose selection is described (default: cuda)",
    )


def environment_of(args: argparse.Namespace) -> Environment:
    """The environment the flags ask for; :class:`EnvironmentError_` names a bad one."""
    return environment_from(
        parse_assignments(args.env, "--env"),
        parse_assignments(args.option, "--option"),
        parse_assignments(args.assume, "--assume"),
        getattr(args, "platform", "cuda") or "cuda",
        getattr(args, "arch", "") or "",
    )


__all__ = ["EnvironmentError_", "add_environment_options", "environment_of"]
