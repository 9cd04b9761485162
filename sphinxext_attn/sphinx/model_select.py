"""``attention-backends-select`` with ``:model-config:``: the decision for each
attention layer kind of a model (:mod:`sphinxext_attn.models`), one table per
kind, under a line saying how many layers of that kind the model has, and
whether the engine starts. The config path is relative to the source file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docutils import nodes

from sphinxext_attn.model.selection import MODEL_FIELDS, NOT_WITH_MODEL, Config, Decision
from sphinxext_attn.models.answer import answer_model
from sphinxext_attn.models.config_file import load_model_config
from sphinxext_attn.models.layers import Layer, as_config
from sphinxext_attn.render import nodes as render
from sphinxext_attn.render.decorate import Decorations
from sphinxext_attn.render.select_nodes import decision_nodes
from sphinxext_attn.selection.decision import Selector


def model_path(value: str, source: str) -> Path:
    """``:model-config:`` relative to the folder of the source file."""
    path = Path(value)
    return path if path.is_absolute() else Path(source).parent / path


def model_nodes(
    selector: Selector,
    options: dict[str, Any],
    path: Path,
    spec: render.TableSpec,
    deco: Decorations,
    gpu: str,
) -> list[nodes.Node]:
    for option in NOT_WITH_MODEL:
        if option in options:
            raise render.RenderError(f":{option}: does not apply with :model-config:")
    try:
        data = load_model_config(path)[1]
    except ValueError as exc:
        raise render.RenderError(f":model-config: {exc}") from None
    overrides = {
        field: (True if options[name] is None else options[name])
        for name, field in MODEL_FIELDS.items()
        if name in options
    }
    capability = options.get("capability", Config().capability)

    def decide(config: Config) -> dict[str, Any]:
        return selector.explain(selector.decide(config)).to_json()

    result = answer_model(selector.interp, decide, data, capability, overrides)
    if not result["layers"]:
        text = f"The model's layers cannot be read: {result.get('unknown')}"
        return [nodes.paragraph("", text, classes=["attn-unknown"])]
    arch = result["architecture"]
    out: list[nodes.Node] = [
        nodes.paragraph(
            "", f"{arch['name']}: vLLM builds {arch['class']}.", classes=["attn-model"]
        )
    ]
    for item in result["layers"]:
        out.append(nodes.paragraph("", _kind_words(item), classes=["attn-layer-kind"]))
        if item.get("unknown_fields"):
            for field, why in item["unknown_fields"].items():
                text = f"Unknown {field}: {why}"
                out.append(nodes.paragraph("", text, classes=["attn-unknown"]))
            continue
        config = _config(item, capability)
        out += decision_nodes(config, Decision.from_json(item), spec, deco=deco, gpu=gpu)
        if item.get("start_error"):
            text = (
                f"The engine does not start: {item['selected']}'s implementation refuses "
                f"this layer when it is built ({item['start_error']})."
            )
            out.append(nodes.paragraph("", text, classes=["attn-none"]))
    return out


def _config(item: dict[str, Any], capability: str) -> Config:

    layer = Layer(values={**item["config"], "num_heads": item["num_heads"]})
    layer.values["attn_type"] = str(layer.values["attn_type"]).upper()
    return as_config(layer, capability)


def _kind_words(item: dict[str, Any]) -> str:
    config = item["config"]
    words = [f"head size {config['head_size']}", str(config["attn_type"]).replace("_", "-")]
    words += [
        word
        for word, on in (
            ("MLA", config["use_mla"]),
            ("sparse", config["use_sparse"]),
            ("sinks", config["has_sink"]),
            ("sliding window", config["has_sliding_window"]),
        )
        if on
    ]
    plural = "layer" if item["count"] == 1 else "layers"
    return f"{item['count']} {plural}: {', '.join(words)}"
