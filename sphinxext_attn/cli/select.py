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

from sphinxext_attn.cli.environment_flags import (
    EnvironmentError_,
    add_environment_options,
    environment_of,
)
from sphinxext_attn.cli.runcache import RunCache
from sphinxext_attn.model.environment import REFERENCE, Environment, case_environment
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.pyeval.machine import Machine
from sphinxext_attn.select.decision import (
    ATTN_TYPES,
    LAYER_FIELDS,
    OPTION_FIELDS,
    Config,
    Decision,
    Selector,
)
from sphinxext_attn.source.tree import SourceTree

#: Decisions kept per tree between runs (the oldest are dropped beyond this).
MAX_KEPT_DECISIONS = 100_000
#: New cases below this are answered in this process alone (a fork costs more).
MIN_FORKED_CASES = 40


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sphinxext-attn select",
        description="The attention backend vLLM selects for a configuration, and why.",
    )
    parser.add_argument(
        "--root",
        help="vLLM source tree (the folder holding vllm/); default: the current folder if "
        "it holds vllm/, else the installed vllm distribution (not imported)",
    )
    parser.add_argument("--capability", default="9.0", help="GPU compute capability, e.g. 9.0")
    parser.add_argument("--dtype", default="bf16", help="fp16, bf16 or fp32")
    parser.add_argument("--kv-cache-dtype", default="auto", help="auto, fp8, fp8_e4m3, ...")
    parser.add_argument("--head-size", type=int, default=128)
    parser.add_argument("--block-size", type=int, default=None)
    parser.add_argument("--num-heads", type=int, default=None)
    parser.add_argument(
        "--attn-type", default="decoder", type=str.upper, choices=ATTN_TYPES, metavar="TYPE"
    )
    for flag in ("mla", "sparse", "sink", "mm-prefix", "non-causal", "kv-connector"):
        parser.add_argument(f"--{flag}", action="store_true")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--cases", help="a JSON list of cases (vLLM's select file format)")
    parser.add_argument("-o", "--output", help="write here instead of stdout")
    parser.add_argument(
        "--arch", default="", help="a ROCm GPU by its arch name, e.g. gfx942 (--platform rocm)"
    )
    from sphinxext_attn.cli.main import add_cache_options

    add_cache_options(parser)
    add_environment_options(parser)
    return parser


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
        #: the environment of each configuration asked (cases may carry their own)
        self.environments: dict[int, Environment] = {}

    def decide(self, config: Config) -> dict[str, Any]:
        environment = self.environments.get(id(config), self.environment)
        key = _key(config, environment)
        found = self.known.get(key)
        if found is not None:
            return found
        if self.tree is None:
            self.tree = SourceTree(self.root)
        selector = self.selectors.get(environment.key())
        if selector is None:
            machine = Machine(environment)
            selector = self.selectors[environment.key()] = Selector(
                Interpreter(self.tree, machine)
            )
        data = selector.explain(selector.decide(config)).to_json()
        self.known[key] = data
        return data

    def decide_cases(self, cases: list[tuple[Config, Environment]]) -> list[dict[str, Any]]:
        """Decisions for configurations with their own environments, in order."""
        for config, environment in cases:
            self.environments[id(config)] = environment
        return self.decide_all([config for config, _ in cases])

    def decide_all(self, configs: list[Config]) -> list[dict[str, Any]]:
        """Every configuration's decision, in order. Past the first new one (which
        readies the evaluator), a forked child answers the second half of the rest
        while this process answers the first: decisions do not depend on order."""
        keys = [_key(c, self.environments.get(id(c), self.environment)) for c in configs]
        pending = list(dict.fromkeys(k for k in keys if k not in self.known))
        by_key = dict(zip(keys, configs, strict=True))
        if pending:
            self.decide(by_key[pending.pop(0)])
        from sphinxext_attn.analysis import forked

        if len(pending) >= MIN_FORKED_CASES and forked.can_fork():
            # Cases of one architecture and attention kind share their checks' memos:
            # grouping them keeps each process from repeating the other's work.
            pending.sort(key=lambda k: _locality(by_key[k]))
            half = len(pending) // 2
            theirs = pending[half:]
            child = forked.Forked(lambda: self._answer(theirs, by_key))
            for key in pending[:half]:
                self.decide(by_key[key])
            got = child.result()
            if got is not None:
                decisions, paths = got
                self.known.update(zip(theirs, decisions, strict=True))
                self.paths = [*self.paths, *paths]  # what the child read counts too
        for key in pending:
            self.decide(by_key[key])  # those the child did not answer; known: no cost
        return [self.known[k] for k in keys]

    def _answer(
        self, keys: list[str], by_key: dict[str, Config]
    ) -> tuple[list[dict[str, Any]], list[str]]:
        decisions = [self.decide(by_key[k]) for k in keys]
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
    text = json.dumps(config.__dict__, sort_keys=True)
    return f"{text}|{environment.key()}" if not environment.is_reference() else text


def _locality(config: Config) -> tuple[str, bool, bool]:
    return config.capability, config.use_mla, config.use_sparse


def config_from_args(args: argparse.Namespace) -> Config:
    """The configuration the options give (``--kv-cache-dtype`` -> ``kv_cache_dtype``)."""
    return Config(
        **{
            field: getattr(args, opt.replace("-", "_"))
            for opt, field in {**OPTION_FIELDS, **LAYER_FIELDS}.items()
        }
    )


def render_text(config: Config, decision: Decision) -> str:
    lines = [f"configuration: {config.describe()}"]
    if decision.error:
        lines.append(f"not evaluated: {decision.error}")
        return "\n".join(lines) + "\n"
    if decision.candidates:
        lines.append("selected: conditional (the code cannot settle it statically)")
        lines += [f"  {c['backend']} if {c['if']}" for c in decision.candidates]
    elif decision.raised:
        lines.append(f"selected: none (vLLM raises {decision.raised})")
    else:
        lines.append(f"selected: {decision.selected or 'none (vLLM raises: no valid backend)'}")
    if decision.assumptions:
        lines.append(f"assuming: {', '.join(decision.assumptions)}")
    lines.append("priority list:")
    for i, name in enumerate(decision.priorities, 1):
        mark = "->" if name == decision.selected else "  "
        why = ""
        if name in decision.rejected:
            sources = decision.sources.get(name, [])
            why = "  rejected: " + "; ".join(
                f"{reason} ({where})" if where else reason
                for reason, where in zip(
                    decision.rejected[name],
                    [*sources, *[""] * len(decision.rejected[name])],
                    strict=False,
                )
            )
        elif name in decision.unknown:
            why = "  not evaluated: " + decision.unknown[name]
        lines.append(f" {mark} {i}. {name}{why}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        environment = environment_of(args)
    except EnvironmentError_ as exc:
        print(f"sphinxext-attn select: {exc}", file=sys.stderr)
        return 2
    from sphinxext_attn.cli.main import root_or_report

    args.root = root_or_report(args.root, "sphinxext-attn select")
    if args.root is None:
        return 2
    root = Path(args.root)
    if not (root / "vllm").is_dir():
        print(
            f"sphinxext-attn select: {root} holds no vllm/ package (use --root)", file=sys.stderr
        )
        return 2
    from sphinxext_attn.cli.main import run_cache

    answers = Answers(root, run_cache(args), environment)
    if args.cases:
        try:
            cases: Any = json.loads(Path(args.cases).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            print(f"sphinxext-attn select: cannot read cases: {exc}", file=sys.stderr)
            return 2
        if not isinstance(cases, list):
            print("sphinxext-attn select: --cases must hold a JSON list", file=sys.stderr)
            return 2
        try:
            pairs = [
                (Config.from_case(c), case_environment(c, environment, i))
                for i, c in enumerate(cases)
            ]
        except EnvironmentError_ as exc:
            print(f"sphinxext-attn select: {exc}", file=sys.stderr)
            return 2
        results = answers.decide_cases(pairs)
        content = json.dumps(results, ensure_ascii=False) + "\n"
    else:
        config = config_from_args(args)
        data = answers.decide(config)
        if args.format == "json":
            content = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        else:
            content = render_text(config, Decision.from_json(data))
    answers.keep()
    if args.output and args.output != "-":
        Path(args.output).write_text(content, encoding="utf-8")
    else:
        sys.stdout.write(content)
    return 0
