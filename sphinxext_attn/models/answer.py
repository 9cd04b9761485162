"""A model's answer: its layer kinds, the decision for each, and whether the
engine starts (the selected implementation's construction checks)."""

from __future__ import annotations

from typing import Any

from sphinxext_attn.model.json_value import JsonObject
from sphinxext_attn.model.selection import Config
from sphinxext_attn.models.layers import FIELDS, Layer, Model, ModelUnknown, as_config, read_model
from sphinxext_attn.models.start_check import check_start
from sphinxext_attn.pyeval import Interpreter

#: the config fields of a layer kind's JSON (as the selector config names them)
CONFIG_FIELDS = tuple(f for f in FIELDS if f != "num_heads")


def _kinds(model: Model) -> list[tuple[Layer, int]]:
    """Identical layers grouped, in the order of their first layer."""
    groups: dict[tuple[Any, ...], list[Layer]] = {}
    for layer in model.layers:
        groups.setdefault(layer.key(), []).append(layer)
    return [(layers[0], len(layers)) for layers in groups.values()]


def answer_model(
    interp: Interpreter,
    decide: Any,
    data: JsonObject,
    capability: str,
    overrides: dict[str, Any],
) -> dict[str, Any]:
    """JSON: ``architecture``, ``layers`` (one per kind), ``start_error`` (the first)."""
    try:
        model = read_model(interp, data, capability, overrides)
    except ModelUnknown as exc:
        return {"architecture": None, "layers": [], "unknown": str(exc), "start_error": None}
    out_layers = []
    start_error = None
    for layer, count in _kinds(model):
        item: dict[str, Any] = {
            "count": count,
            "config": {f: _shown(f, layer.values.get(f)) for f in CONFIG_FIELDS},
            "num_heads": layer.values.get("num_heads"),
        }
        if layer.unknown:
            item.update(selected=None, unknown_fields=dict(layer.unknown))
            item["error"] = "not evaluated: " + "; ".join(
                f"{k}: {v}" for k, v in layer.unknown.items()
            )
        else:
            config: Config = as_config(layer, capability)
            decision = dict(decide(config))
            item.update(decision)
            check = check_start(interp, decision.get("selected"), config, model.num_kv_heads)
            item.update(check.to_json())
            start_error = start_error or check.error
        item["derivation"] = layer.derivation
        out_layers.append(item)
    return {
        "architecture": {
            "name": model.architecture.name,
            "class": f"{model.architecture.module}.{model.architecture.class_name}",
            "registered_at": str(model.architecture.location),
        },
        "layers": out_layers,
        "start_error": start_error,
    }


def _shown(name: str, value: Any) -> Any:
    return value.lower() if name == "attn_type" and isinstance(value, str) else value
