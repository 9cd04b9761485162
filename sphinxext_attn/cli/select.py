"""``sphinxext-attn select``: which backend vLLM picks for a configuration, and why.

One configuration from options (``--format text`` for people, ``json`` for
tools), or a whole file of cases (``--cases``, the format of vLLM's selection
cases) answered in one process.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from sphinxext_attn.cli.checks import (
    BadInput,
    OneLineParser,
    check_engine_options,
    check_output,
    check_root,
    flag_type,
    root_or_report,
    write_output,
)
from sphinxext_attn.cli.decisions import Answers
from sphinxext_attn.cli.environment_flags import (
    EnvironmentError_,
    add_environment_options,
    environment_of,
    read_plugin_flags,
)
from sphinxext_attn.cli.model_select import (
    answer_model_config,
    model_cases,
    model_config_data,
    overrides_from_args,
    render_model_text,
    start_check,
    start_text,
)
from sphinxext_attn.cli.runcache import add_cache_options, run_cache
from sphinxext_attn.model.environment import (
    DEFAULT_ROCM_ARCH,
    Environment,
    case_environment,
    gpu_words,
)
from sphinxext_attn.model.plugin import Plugins
from sphinxext_attn.model.selection import (
    LAYER_FIELDS,
    OPTION_FIELDS,
    Config,
    Decision,
)
from sphinxext_attn.render.select_text import render_text
from sphinxext_attn.selection import inputs
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.vocab.names import ATTN_TYPES, DTYPE_NAMES

#: The configuration flags: help, and the value a run uses when the flag is not given
#: (:class:`Config`'s defaults: the selector's reference configuration).
CONFIG_FLAGS: dict[str, tuple[str, Any]] = {
    "capability": ("GPU compute capability MAJOR.MINOR, e.g. 8.0, 9.0, 10.0, 12.0", None),
    "dtype": (f"model dtype: {', '.join(DTYPE_NAMES)}", None),
    "kv-cache-dtype": ("KV cache dtype: one of the release's CacheDType (auto, fp8, ...)", None),
    "head-size": ("attention head size, a positive integer", None),
    "block-size": ("KV cache block size, a positive integer", "the engine's default"),
    "num-heads": ("number of attention heads, a positive integer", "unknown"),
    "attn-type": (f"attention type: {', '.join(t.lower() for t in ATTN_TYPES)}", None),
    "mla": ("the model uses multi-head latent attention", "off"),
    "sparse": ("sparse attention", "off"),
    "sink": ("attention sinks", "off"),
    "mm-prefix": ("a multimodal prefix (bidirectional attention over it)", "off"),
    "non-causal": ("non-causal attention", "off"),
    "kv-connector": ("a KV connector is configured (ROCm drops ROCM_ATTN then)", "off"),
}
#: Every configuration flag -> its :class:`Config` field.
ALL_FIELDS = {**OPTION_FIELDS, **LAYER_FIELDS}
CONVERTERS = {
    "capability": inputs.capability,
    "dtype": inputs.dtype,
    "kv-cache-dtype": inputs.kv_cache_dtype,
    "head-size": inputs.positive_int,
    "block-size": inputs.positive_int,
    "num-heads": inputs.positive_int,
    "attn-type": inputs.attn_type,
}


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="sphinxext-attn select",
        description="The attention backend vLLM selects for a configuration, and why. "
        "A flag not given takes its default (shown, and marked in the output).",
    )
    parser.add_argument(
        "--root",
        help="vLLM source tree (the folder holding vllm/); default: the current folder if "
        "it holds vllm/, else the installed vllm distribution (not imported)",
    )
    group = parser.add_argument_group("configuration")
    for flag, (text, shown) in CONFIG_FLAGS.items():
        field = ALL_FIELDS[flag]
        default = shown or str(getattr(Config(), field)).lower()
        help_text = f"{text} (default: {default})"
        if flag in CONVERTERS:
            metavar = "TYPE" if flag == "attn-type" else None
            kind = flag_type(CONVERTERS[flag])
            group.add_argument(
                f"--{flag}", type=kind, default=None, help=help_text, metavar=metavar
            )
        else:
            group.add_argument(f"--{flag}", action="store_true", default=None, help=help_text)
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text for people, json for tools (default: text)",
    )
    parser.add_argument(
        "--cases",
        metavar="FILE",
        help="a JSON list of cases (vLLM's select file format) answered in order, "
        "instead of the configuration flags (default: none)",
    )
    parser.add_argument(
        "--model-config",
        metavar="PATH",
        help="a Hugging Face config.json (or its folder): the decision per attention "
        "layer kind of that model; the configuration flags given override what it "
        "implies (default: none)",
    )
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write here (default: - for stdout)"
    )
    parser.add_argument(
        "--arch",
        default=None,
        type=flag_type(inputs.arch),
        help="a ROCm GPU by its arch name, e.g. gfx942 (--platform rocm; default: none)",
    )
    parser.add_argument(
        "--backend",
        "--attention-backend",
        dest="backend",
        action="append",
        default=None,
        type=flag_type(inputs.backend_request),
        metavar="[KIND=]NAME",
        help="a backend asked for, as vLLM's --attention-backend asks: the answer is what "
        "the platform's code does with the request; KIND=NAME (repeatable) asks for the "
        "layers of one KV-cache kind, as attention_config.backend_per_kind does "
        "(default: none, vLLM chooses)",
    )
    add_cache_options(parser)
    add_environment_options(parser)
    return parser


def config_from_args(args: argparse.Namespace) -> tuple[Config, list[str]]:
    """The configuration the flags give, and the flags left at their defaults."""
    values: dict[str, Any] = {}
    defaulted: list[str] = []
    for flag, field in ALL_FIELDS.items():
        value = getattr(args, flag.replace("-", "_"))
        if value is None:
            defaulted.append(flag)
        else:
            values[field] = value
    return Config(**values), defaulted


def requests_of(args: argparse.Namespace) -> tuple[str | None, dict[str, str]]:
    """The backend asked for every layer, and those asked per KV-cache kind."""
    plain = [name for kind, name in args.backend or [] if not kind]
    if len(plain) > 1:
        raise BadInput(
            f"argument --backend: {', '.join(plain)}: give one NAME (and KIND=NAME per kind)"
        )
    per_kind: dict[str, str] = {}
    for kind, name in args.backend or []:
        if kind in per_kind:
            raise BadInput(f"argument --backend: {kind}= given twice; give one NAME per kind")
        if kind:
            per_kind[kind] = name
    return (plain[0] if plain else None), per_kind


def echo(
    config: Config,
    defaulted: list[str],
    args: argparse.Namespace,
    argv: list[str],
    derived: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """The whole configuration a decision was made for (JSON ``configuration``), as
    the platform has it: ROCm's arch (``derived``: its capability, as the release's
    code derives it), no capability where the platform's code derives its own."""
    data: dict[str, Any] = {flag: getattr(config, field) for flag, field in ALL_FIELDS.items()}
    platform = data["platform"] = getattr(args, "platform", "cuda")
    if not any(a == "--platform" or a.startswith("--platform=") for a in argv):
        defaulted = [*defaulted, "platform"]
    if getattr(args, "arch", None):
        data["arch"] = args.arch
    if platform != "cuda":  # the platform's code derives the GPU: no capability asked
        del data["capability"]
        defaulted = [d for d in defaulted if d != "capability"]
    if platform == "rocm":
        if not getattr(args, "arch", None):
            data["arch"] = DEFAULT_ROCM_ARCH
            defaulted = [*defaulted, "arch"]
        if derived is not None:
            data["derived_capability"] = f"{derived[0]}.{derived[1]}"
    if config.selected_backend is not None:
        data["backend"] = config.selected_backend
    return {"values": data, "defaults": defaulted}


def check_flags_apply(args: argparse.Namespace, argv: list[str]) -> None:
    """A flag that would be accepted and then ignored is an error: the configuration
    beside ``--cases`` (the cases say theirs), ``--arch`` off ROCm, a capability where
    the platform's code derives its own."""
    given = [f for f in ALL_FIELDS if getattr(args, f.replace("-", "_")) is not None]
    if args.cases and given:
        raise BadInput(
            f"--{given[0]} does not apply with --cases (each case gives its own "
            "configuration); drop it or answer one configuration without --cases"
        )
    platform = getattr(args, "platform", "cuda")
    if args.arch and platform != "rocm":
        raise BadInput(
            f"--arch {args.arch} names a ROCm GPU, but the platform is {platform}; "
            "add --platform rocm"
        )
    if args.capability is not None and platform != "cuda":
        hint = "; name the GPU with --arch" if platform == "rocm" else ""
        raise BadInput(
            f"--capability {args.capability} does not apply on {platform} (its code "
            f"derives its own){hint}"
        )


def check_known_arch(root: Path, environment: Environment, plugins: Plugins = ()) -> None:
    """``--arch``: a GPU for which the release's own code derives a capability; else
    the message lists the ones its ROCm platform module names."""
    # lazy: platform_lists adds 8.9 ms to a warm select run, which asks it only for ROCm
    # (python -X importtime, median of 7)
    from sphinxext_attn.selection.platform_lists import arch_capability, named_archs

    tree = SourceTree(root, plugins=plugins)
    if arch_capability(tree, environment, environment.arch) is None:
        known = named_archs(tree, environment)
        raise BadInput(
            f"--arch {environment.arch}: not a GPU this release's ROCm code knows; "
            f"it knows {', '.join(known) or 'none'}"
        )


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        return answer(args, argv)
    except (BadInput, EnvironmentError_) as exc:
        print(f"sphinxext-attn select: {exc}", file=sys.stderr)
        return 2


def answer(args: argparse.Namespace, argv: list[str]) -> int:
    """The decision (or the cases' decisions) the checked flags ask for."""
    args.root = root_or_report(args.root, "sphinxext-attn select")
    if args.root is None:
        return 2
    root = check_root(args.root)
    plugins = read_plugin_flags(args, args.root)
    environment = environment_of(args, plugins)
    check_engine_options(root, environment)
    check_flags_apply(args, argv)
    if environment.platform == "rocm" and environment.arch:
        check_known_arch(root, environment, plugins)
    check_output(args.output)
    answers = Answers(root, run_cache(args, plugins), environment)
    if args.model_config and args.cases:
        raise BadInput("--model-config: not with --cases (give a case key model_config)")
    if args.cases:
        try:
            loaded: object = json.loads(Path(args.cases).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BadInput(f"--cases {args.cases}: cannot read: {exc}") from None
        try:
            cases = inputs.check_cases(loaded)
        except ValueError as exc:
            raise BadInput(f"--cases {args.cases}: {exc}") from None
        if any("model_config" in c for c in cases):
            results = model_cases(answers, cases, Path(args.cases).parent, environment, plugins)
        else:
            pairs = [
                (Config.from_case(c), case_environment(c, environment, i, plugins))
                for i, c in enumerate(cases)
            ]
            for index, (config, _) in enumerate(pairs):
                where = f"--cases {args.cases}: case {index}: selected_backend"
                answers.check_backend(config.selected_backend, where)
            results = answers.decide_all(pairs)
        content = json.dumps(results, ensure_ascii=False) + "\n"
    elif args.model_config:
        overrides = overrides_from_args(args)
        model = model_config_data(args.model_config, "--model-config")
        result = answer_model_config(
            answers, environment, model, args.capability or Config().capability, overrides
        )
        if args.format == "json":
            content = json.dumps(result, indent=2, ensure_ascii=False) + "\n"
        else:
            content = render_model_text(result)
    else:
        config, defaulted = config_from_args(args)
        answers.check_kv_cache_dtype(config)
        backend, per_kind = requests_of(args)
        for name in [*([backend] if backend else []), *per_kind.values()]:
            answers.check_backend(name, "argument --backend")
        kind = ""
        if per_kind:
            backend, kind = answers.per_kind_request(config, backend, per_kind)
        config.selected_backend = backend
        data = dict(answers.decide(config))
        data["labels"] = {
            name: Decision.from_json(data).label(name) for name in data["priorities"]
        }
        data["flash_attn_version"] = answers.flash_attn_version(config, data["selected"])
        derived = None
        if environment.platform == "rocm":
            # lazy: as in check_known_arch (8.9 ms on a warm select run)
            from sphinxext_attn.selection.platform_lists import arch_capability

            gpu = replace(environment, arch=environment.arch or DEFAULT_ROCM_ARCH)
            derived = arch_capability(SourceTree(root, plugins=plugins), gpu, gpu.arch)
        source = answers.flash_attn_source(data["selected"])
        if source:
            data["flash_attn_source"] = source
        data.update(start_check(answers, environment, config, data["selected"]))
        data["configuration"] = echo(config, defaulted, args, argv, derived)
        if per_kind:
            data["configuration"]["values"]["backend_per_kind"] = per_kind
            data["configuration"]["values"]["kv_cache_kind"] = kind
        if args.format == "json":
            content = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        else:
            decision = Decision.from_json(data)
            decision.class_path = data.get("class_path", "")
            decision.ignored_request = data.get("ignored_request", "")
            decision.flash_attn_version = data["flash_attn_version"]
            decision.flash_attn_source = data.get("flash_attn_source", "")
            content = render_text(
                config,
                decision,
                data["configuration"],
                gpu_words(environment),
                data.get("alternatives"),
                {flag: default for flag, (_, default) in CONFIG_FLAGS.items()},
            )
            content += start_text(data)
    answers.keep()
    for diag in answers.plugin_warnings():
        print(f"warning: {diag}", file=sys.stderr)
    if args.output and args.output != "-":
        write_output(Path(args.output), content)
    else:
        sys.stdout.write(content)
    return 0
