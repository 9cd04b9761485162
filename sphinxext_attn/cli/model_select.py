"""``select --model-config PATH`` and the case key ``model_config``: the
decision per attention layer kind of a model (:mod:`sphinxext_attn.models`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from sphinxext_attn.cli.checks import BadInput
from sphinxext_attn.cli.decisions import Answers
from sphinxext_attn.model.environment import Environment, case_environment
from sphinxext_attn.model.json_value import JsonObject
from sphinxext_attn.model.plugin import Plugins
from sphinxext_attn.model.selection import MODEL_FIELDS, NOT_WITH_MODEL, Config
from sphinxext_attn.models.answer import answer_model
from sphinxext_attn.models.config_file import load_model_config
from sphinxext_attn.models.start_check import check_start


def model_config_data(path: str, flag: str) -> JsonObject:
    try:
        return load_model_config(path)[1]
    except ValueError as exc:
        raise BadInput(f"{flag}: {exc}; give a Hugging Face config.json or its folder") from None


def answer_model_config(
    answers: Answers,
    environment: Environment,
    data: JsonObject,
    capability: str,
    overrides: dict[str, Any],
) -> dict[str, Any]:
    """The model's JSON answer in ``environment``."""
    interp = answers.selector(environment).interp

    def decide(config: Config) -> dict[str, Any]:
        return answers.decide(config, environment)

    return answer_model(interp, decide, data, capability, overrides)


def overrides_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The flags given beside ``--model-config``: each overrides what the model implies."""
    for flag in NOT_WITH_MODEL:
        if getattr(args, flag.replace("-", "_"), None) is not None:
            raise BadInput(
                f"--{flag}: not with --model-config (accepted beside it: --capability, "
                + ", ".join(f"--{f}" for f in MODEL_FIELDS)
                + ")"
            )
    found = {}
    for flag, field in MODEL_FIELDS.items():
        value = getattr(args, flag.replace("-", "_"), None)
        if value is not None:
            found[field] = value
    return found


def render_model_text(result: dict[str, Any]) -> str:
    """The layer kinds and their backends, for people."""
    if not result["layers"]:
        return f"model: not read ({result.get('unknown')})\n"
    arch = result["architecture"]
    lines = [f"model: {arch['name']} -> {arch['class']} ({arch['registered_at']})"]
    for item in result["layers"]:
        config = item["config"]
        words = [
            f"head size {config['head_size']}",
            str(config["dtype"]),
            f"KV cache {config['kv_cache_dtype']}",
            str(config["attn_type"]).replace("_", "-"),
        ]
        words += [
            w
            for w, on in (
                ("MLA", config["use_mla"]),
                ("sparse", config["use_sparse"]),
                ("sinks", config["has_sink"]),
                ("sliding window", config["has_sliding_window"]),
            )
            if on
        ]
        lines.append(f"{item['count']} x layer: {', '.join(words)}")
        if item.get("unknown_fields"):
            lines += [f"    unknown {k}: {v}" for k, v in item["unknown_fields"].items()]
            lines.append("    selected: not evaluated")
            continue
        lines.append(f"    selected: {item.get('selected') or 'none (vLLM raises)'}")
        if item.get("start_error"):
            lines.append(
                f"    does not start: the implementation refuses the layer "
                f"({item['start_error']}, {item.get('start_error_source')})"
            )
        for name, why in item.get("rejected", {}).items():
            lines.append(f"    not {name}: {'; '.join(why)}")
        for name, step in item["derivation"].items():
            keys = f" from {', '.join(step['config_keys'])}" if step["config_keys"] else ""
            lines.append(f"    {name} = {step['value']}{keys} ({step['code']})")
    return "\n".join(lines) + "\n"


def check_model_case(index: int, value: object, base: Path) -> JsonObject:
    """A case's ``model_config``: a path relative to the cases file."""
    if not isinstance(value, str):
        raise BadInput(f"case {index}: model_config: {value!r} is not a path")
    path = Path(value) if Path(value).is_absolute() else base / value
    return model_config_data(str(path), f"case {index}: model_config")


def model_cases(
    answers: Answers,
    cases: list[dict[str, Any]],
    base: Path,
    environment: Environment,
    plugins: Plugins = (),
) -> list[dict[str, Any]]:
    """Each case's answer: a model's where it names ``model_config`` (its ``config``
    keys override what the model implies), else the configuration's decision (a case's
    platform one of vLLM's or of the run's ``plugins``)."""
    results = []
    for index, case in enumerate(cases):
        case_env = case_environment(case, environment, index, plugins)
        if "model_config" not in case:
            results.append(answers.decide(Config.from_case(case), case_env))
            continue
        data = check_model_case(index, case["model_config"], base)
        capability = str(case.get("capability", Config().capability))
        overrides = dict(case.get("config", {}))
        results.append(answer_model_config(answers, case_env, data, capability, overrides))
    return results


def start_check(
    answers: Answers, environment: Environment, config: Config, selected: str | None
) -> JsonObject:
    """JSON ``start_error`` (and its source) of one configuration's pick."""
    interp = answers.selector(environment).interp
    return check_start(interp, selected, config, None).to_json()


def start_text(data: dict[str, Any]) -> str:
    """The refusal in plain words (nothing when the layer is accepted)."""
    if data.get("start_error"):
        return (
            f"does not start: {data['selected']}'s implementation refuses this layer at "
            f"construction ({data['start_error']}; {data.get('start_error_source')})\n"
        )
    if data.get("start_unknown"):
        return f"start not evaluated: {data['start_unknown']}\n"
    return ""
