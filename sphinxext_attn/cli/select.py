"""``sphinxext-attn select``: which backend vLLM picks for a configuration, and why.

One configuration from options (``--format text`` for people, ``json`` for
tools), or a whole file of cases (``--cases``, the format of vLLM's selection
cases) answered in one process.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from sphinxext_attn.cli.checks import (
    BadInput,
    OneLineParser,
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
from sphinxext_attn.cli.runcache import add_cache_options, run_cache
from sphinxext_attn.model.environment import case_environment
from sphinxext_attn.select import inputs
from sphinxext_attn.select.decision import (
    LAYER_FIELDS,
    OPTION_FIELDS,
    Config,
    Decision,
)
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
        default=None,
        type=flag_type(inputs.backend_name),
        metavar="NAME",
        help="the backend asked for (vLLM's --attention-backend), by its registry name, "
        "e.g. FLASH_ATTN; answered where the platform's get_attn_backend_cls decides "
        "(xpu, cpu, tpu, a plugin's) (default: none, vLLM chooses)",
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
    return Config(**values, selected_backend=getattr(args, "backend", None)), defaulted


def echo(
    config: Config, defaulted: list[str], args: argparse.Namespace, argv: list[str]
) -> dict[str, Any]:
    """The whole configuration a decision was made for (JSON ``configuration``)."""
    data: dict[str, Any] = {flag: getattr(config, field) for flag, field in ALL_FIELDS.items()}
    data["platform"] = getattr(args, "platform", "cuda")
    if not any(a == "--platform" or a.startswith("--platform=") for a in argv):
        defaulted = [*defaulted, "platform"]
    if getattr(args, "arch", None):
        data["arch"] = args.arch
    if getattr(args, "backend", None):
        data["backend"] = args.backend
    return {"values": data, "defaults": defaulted}


def _shown(value: Any, flag: str) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return CONFIG_FLAGS[flag][1] if flag in CONFIG_FLAGS else "none"
    return str(value).lower() if flag == "attn-type" else str(value)


def _candidate(candidate: dict[str, Any]) -> str:
    """A candidate's backend, with its class where a plugin's names collide, or what
    vLLM raises."""
    if candidate.get("raised"):
        return f"none (vLLM raises {candidate['raised']})"
    path = candidate.get("class_path")
    return f"{candidate['backend']} ({path})" if path else str(candidate["backend"])


def render_text(
    config: Config,
    decision: Decision,
    configuration: dict[str, Any] | None = None,
    gpu: str = "",
) -> str:
    """The decision for people: the configuration (defaults marked), the pick, and
    one label for every backend of the list."""
    lines = [f"configuration: {config.describe(gpu)}"]
    if configuration is not None:
        defaults = set(configuration["defaults"])
        for flag, value in configuration["values"].items():
            mark = "  (default)" if flag in defaults else ""
            lines.append(f"  {flag + ':':16}{_shown(value, flag)}{mark}")
    if decision.error:
        lines.append(f"not evaluated: {decision.error}")
        return "\n".join(lines) + "\n"
    if decision.candidates and decision.selected:
        lines.append(f"selected: {decision.selected} (from a list that depends on a fact)")
        lines += [f"  {_candidate(c)} if {c['if']}" for c in decision.candidates]
    elif decision.candidates:
        lines.append("selected: conditional (the code cannot settle it statically)")
        lines += [f"  {_candidate(c)} if {c['if']}" for c in decision.candidates]
    elif decision.raised:
        lines.append(f"selected: none (vLLM raises {decision.raised})")
    else:
        lines.append(f"selected: {decision.selected or 'none (vLLM raises: no valid backend)'}")
    if decision.class_path:
        lines.append(f"class: {decision.class_path}")
    if decision.ignored_request:
        lines.append(f"request: {decision.ignored_request}")
    if decision.flash_attn_version is not None:
        lines.append(
            f"FlashAttention: FA{decision.flash_attn_version} ({decision.selected} runs it)"
        )
    if decision.assumptions:
        lines.append(f"assuming: {', '.join(decision.assumptions)}")
    for candidate in decision.candidates:
        if candidate.get("priorities"):
            lines.append(f"priority list if {candidate['if']}:")
            lines += [f"    {i}. {n}" for i, n in enumerate(candidate["priorities"], 1)]
    if not decision.priorities and any(c.get("priorities") for c in decision.candidates):
        return "\n".join(lines) + "\n"
    lines.append("priority list:")
    for i, name in enumerate(decision.priorities, 1):
        mark = "->" if name == decision.selected else "  "
        why = ""
        if name in decision.rejected:
            sources = decision.sources.get(name, [])
            why = ": " + "; ".join(
                f"{reason} ({where})" if where else reason
                for reason, where in zip(
                    decision.rejected[name],
                    [*sources, *[""] * len(decision.rejected[name])],
                    strict=False,
                )
            )
        elif name in decision.unknown:
            why = ": " + decision.unknown[name]
        lines.append(f" {mark} {i}. {name}  {decision.label(name)}{why}")
    return "\n".join(lines) + "\n"


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
    read_plugin_flags(args, args.root)
    environment = environment_of(args)
    check_output(args.output)
    answers = Answers(root, run_cache(args), environment)
    if args.cases:
        try:
            cases: Any = json.loads(Path(args.cases).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BadInput(f"--cases {args.cases}: cannot read: {exc}") from None
        try:
            inputs.check_cases(cases)
        except ValueError as exc:
            raise BadInput(f"--cases {args.cases}: {exc}") from None
        pairs = [
            (Config.from_case(c), case_environment(c, environment, i)) for i, c in enumerate(cases)
        ]
        results = answers.decide_all(pairs)
        content = json.dumps(results, ensure_ascii=False) + "\n"
    else:
        config, defaulted = config_from_args(args)
        answers.check_kv_cache_dtype(config)
        answers.check_backend(config)
        data = dict(answers.decide(config))
        data["labels"] = {
            name: Decision.from_json(data).label(name) for name in data["priorities"]
        }
        data["flash_attn_version"] = answers.flash_attn_version(config, data["selected"])
        data["configuration"] = echo(config, defaulted, args, argv)
        if args.format == "json":
            content = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        else:
            decision = Decision.from_json(data)
            decision.class_path = data.get("class_path", "")
            decision.ignored_request = data.get("ignored_request", "")
            decision.flash_attn_version = data["flash_attn_version"]
            from sphinxext_attn.model.environment import gpu_words

            content = render_text(config, decision, data["configuration"], gpu_words(environment))
    answers.keep()
    for diag in answers.plugin_warnings():
        print(f"warning: {diag}", file=sys.stderr)
    if args.output and args.output != "-":
        write_output(Path(args.output), content)
    else:
        sys.stdout.write(content)
    return 0
