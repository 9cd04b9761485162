"""The attention layers vLLM builds for a model's config, each field with the
config keys and the code line it came from, grouped into kinds.

Derived from the release's code: the registry (:mod:`.architecture`), the
convertor (:mod:`.config_reading`), the model file (:mod:`.model_file`,
:mod:`.layer_windows`). Three readings follow vLLM's code by hand, named here
and in the docs, because the evaluator cannot follow torch: the dtype
(``_resolve_auto_dtype``), the cache config's global sliding window
(``EngineArgs.create_engine_config``) and which attention layer passes
``num_heads`` to the selector.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from sphinxext_attn.model.json_value import JsonObject
from sphinxext_attn.model.selection import Config
from sphinxext_attn.models.architecture import Architecture, find_architecture
from sphinxext_attn.models.config_reading import Reading, _config_object, read_config
from sphinxext_attn.models.layer_windows import layer_window
from sphinxext_attn.models.model_file import ENCODER_ONLY_CLASS, ModelFile, read_model_file
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.vocab.paths import (
    ATTENTION_LAYER_FILE,
    ENGINE_ARGS_FILE,
    MLA_ATTENTION_FILE,
    MODEL_CONFIG_FILE,
)

DTYPE_FILE = MODEL_CONFIG_FILE
ATTENTION_FILES = {
    False: ATTENTION_LAYER_FILE,
    True: MLA_ATTENTION_FILE,
}
#: HF dtype names -> the selector's (``torch_dtype`` is the older key transformers renames)
DTYPES = {
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "float32": "fp32",
    "float": "fp32",
}
#: the fields a layer kind holds, in the selector config's order
FIELDS = (
    "head_size",
    "dtype",
    "kv_cache_dtype",
    "use_mla",
    "has_sink",
    "use_sparse",
    "use_mm_prefix",
    "attn_type",
    "has_sliding_window",
    "num_heads",
)


class ModelUnknown(Exception):
    """The model cannot be read at all (the reason)."""


@dataclass
class Layer:
    """One attention layer: its values, each value's derivation, unknown fields."""

    values: dict[str, Any] = field(default_factory=dict)
    derivation: dict[str, dict[str, Any]] = field(default_factory=dict)
    unknown: dict[str, str] = field(default_factory=dict)

    def set(self, name: str, value: Any, keys: list[str], code: str) -> None:
        self.values[name] = value
        self.derivation[name] = {"value": value, "config_keys": keys, "code": code}

    def key(self) -> tuple[Any, ...]:
        return tuple((f, self.values.get(f), self.unknown.get(f)) for f in FIELDS)


@dataclass
class Model:
    architecture: Architecture
    layers: list[Layer]
    num_kv_heads: int | None


def _line_of(interp: Interpreter, path: str, needle: str) -> str:
    """``path:line`` of the first line holding ``needle`` (the file alone if none)."""
    text = interp.tree.text(path) or ""
    for number, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return f"{path}:{number}"
    return path


def _selector_keywords(interp: Interpreter, path: str) -> set[str]:
    """The keywords a layer class passes in its ``get_attn_backend(...)`` call."""
    parsed = interp.tree.parse(path)
    found: set[str] = set()
    for node in ast.walk(parsed) if parsed is not None else ():
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "get_attn_backend":
            found.update(k.arg for k in node.keywords if k.arg)
    return found


def read_model(
    interp: Interpreter, data: JsonObject, capability: str, overrides: dict[str, Any]
) -> Model:
    """Every attention layer of the model ``data`` describes (ModelUnknown: none can be)."""
    named = data["architectures"]  # a list of names (load_model_config checks it)
    names = [n for n in named if isinstance(n, str)] if isinstance(named, list) else []
    arch = find_architecture(interp.tree, names)
    if isinstance(arch, str):
        raise ModelUnknown(arch)
    facts = read_model_file(interp.tree, arch.module, arch.class_name)
    if isinstance(facts, str):
        raise ModelUnknown(facts)
    reading = read_config(interp, data)
    count = reading.values.get("num_hidden_layers")
    if not isinstance(count, int) or count <= 0:
        why = reading.unknown.get("num_hidden_layers", f"num_hidden_layers is {count!r}")
        raise ModelUnknown(f"the number of layers is unknown: {why}")
    config = _config_object(interp.module(arch.module), data)
    kv_heads = data.get("num_key_value_heads", reading.values.get("num_attention_heads"))
    layers = []
    for index in range(count):
        layer = Layer()
        _shared(interp, layer, data, reading, facts, arch, capability)
        _window(interp, layer, data, facts, arch, config, index)
        for name, value in overrides.items():
            layer.set(name, value, [], "given on the command line")
            layer.unknown.pop(name, None)
        layers.append(layer)
    return Model(arch, layers, kv_heads if isinstance(kv_heads, int) else None)


def _shared(
    interp: Interpreter,
    layer: Layer,
    data: JsonObject,
    reading: Reading,
    facts: ModelFile,
    arch: Architecture,
    capability: str,
) -> None:
    src = {k: str(v) for k, v in reading.sources.items()}
    for name in ("head_size", "is_deepseek_mla"):
        if name in reading.unknown:
            layer.unknown["use_mla" if name == "is_deepseek_mla" else name] = reading.unknown[name]
    head_keys: list[str] = [
        k
        for k in (
            "kv_lora_rank",
            "qk_rope_head_dim",
            "head_dim",
            "hidden_size",
            "num_attention_heads",
        )
        if k in data
    ]
    if "head_size" in reading.values:
        layer.set("head_size", reading.values["head_size"], head_keys, src["head_size"])
    mla = reading.values.get("is_deepseek_mla")
    if isinstance(mla, bool):
        layer.set("use_mla", mla, ["model_type", "kv_lora_rank"], src["is_deepseek_mla"])
    _dtype(layer, data, facts, capability, _line_of(interp, DTYPE_FILE, "def _resolve_auto_dtype"))
    layer.set("kv_cache_dtype", "auto", [], "the engine's default (--kv-cache-dtype auto)")
    if arch.table == "_MULTIMODAL_MODELS":
        layer.unknown["use_mm_prefix"] = "a multimodal model: its prefix attention is not read"
    else:
        where = f"{arch.location} ({arch.table}: not a multimodal model)"
        layer.set("use_mm_prefix", False, [], where)
    mla_path = ATTENTION_FILES[bool(mla)]
    passes_heads = "num_heads" in _selector_keywords(interp, mla_path)
    heads = reading.values.get("num_attention_heads") if passes_heads else None
    layer.set(
        "num_heads",
        heads,
        ["num_attention_heads"] if passes_heads else [],
        _line_of(interp, mla_path, "get_attn_backend("),
    )
    if mla:
        layer.set("has_sink", False, [], _line_of(interp, mla_path, "get_attn_backend("))
        sparse = "index_topk" in data and "index_topk" in facts.config_reads
        code = (
            f"{facts.path}:{facts.config_reads['index_topk']}"
            if "index_topk" in facts.config_reads
            else facts.path
        )
        layer.set("use_sparse", sparse, ["index_topk"], code)
    else:
        line = facts.keywords.get("sinks")
        where = f"{facts.path}:{line}" if line else f"{facts.path} (no sinks= passed)"
        layer.set("has_sink", line is not None, [], where)
        layer.set("use_sparse", False, [], _line_of(interp, mla_path, "get_attn_backend("))
    _attn_type(layer, data, facts)


def _dtype(layer: Layer, data: JsonObject, facts: ModelFile, capability: str, code: str) -> None:
    """``_resolve_auto_dtype``: a float32 checkpoint runs in float16 for a pooling model
    and in the platform's first dtype otherwise (bf16 from SM 8.0 on CUDA); a dtype
    the GPU lacks falls back to that preferred dtype."""
    key = "dtype" if data.get("dtype") is not None else "torch_dtype"
    raw = data.get(key)
    if raw is None:
        layer.unknown["dtype"] = (
            "config.json names no dtype: vLLM reads the weights' safetensors metadata, "
            "not available here (pin it with --dtype)"
        )
        return
    named = DTYPES.get(str(raw).lower().removeprefix("torch."))
    if named is None:
        layer.unknown["dtype"] = f"{key} {raw!r} is not a dtype this reading knows"
        return
    major = int(capability.split(".")[0])
    supported = ["bf16", "fp16", "fp32"] if major >= 8 else ["fp16", "fp32"]
    pooling = facts.pooling is not None
    preferred = "fp16" if pooling else supported[0]
    value = preferred if named == "fp32" or named not in supported else named
    keys = [key]
    if pooling:
        code += f"; is_pooling_model at {facts.pooling}"
    layer.set("dtype", value, keys, code)


def _attn_type(layer: Layer, data: JsonObject, facts: ModelFile) -> None:
    classes = set(facts.classes)
    if classes and classes <= {ENCODER_ONLY_CLASS}:
        line = facts.classes[ENCODER_ONLY_CLASS]
        layer.set("attn_type", "ENCODER_ONLY", [], f"{facts.path}:{line} ({ENCODER_ONLY_CLASS})")
        return
    if len(facts.attn_types) == 1:
        member, line = next(iter(facts.attn_types.items()))
        layer.set("attn_type", member, [], f"{facts.path}:{line}")
        return
    assigned = facts.assigned_attn_types
    if set(assigned) == {"DECODER", "ENCODER_ONLY"} and "is_causal" in facts.config_reads:
        causal = data.get("is_causal", True)
        member = "ENCODER_ONLY" if causal is False else "DECODER"
        line = facts.config_reads["is_causal"]
        layer.set("attn_type", member, ["is_causal"], f"{facts.path}:{line}")
        return
    if len(assigned) == 1:
        member, line = next(iter(assigned.items()))
        layer.set("attn_type", member, [], f"{facts.path}:{line}")
        return
    if not assigned and not facts.attn_types:
        layer.set("attn_type", "DECODER", [], f"{facts.path} (no attn_type passed: the default)")
        return
    layer.unknown["attn_type"] = (
        f"{facts.path} chooses among {', '.join(sorted({*assigned, *facts.attn_types}))} "
        "by a rule not read"
    )


def _window(
    interp: Interpreter,
    layer: Layer,
    data: JsonObject,
    facts: ModelFile,
    arch: Architecture,
    config: Any,
    index: int,
) -> None:
    """The layer's own window, else the cache config's: the config's
    ``sliding_window`` when ``layer_types`` is absent or all sliding (0: disabled)."""
    if layer.values.get("use_mla"):
        layer.set("has_sliding_window", False, [], "MLA layers take no sliding window")
        return
    own: bool | None = False
    where = f"{facts.path} (no per_layer_sliding_window= passed)"
    if facts.window_site is not None:
        own, where = layer_window(interp, arch.module, facts.window_site, config, index)
        if own is None:
            layer.unknown["has_sliding_window"] = where
            return
    if own:
        layer.set("has_sliding_window", True, ["sliding_window", "layer_types"], where)
        return
    types = data.get("layer_types")
    window = data.get("sliding_window")
    all_sliding = types is None or (
        isinstance(types, list) and all(t == "sliding_attention" for t in types)
    )
    code = _line_of(interp, ENGINE_ARGS_FILE, "get_sliding_window()")
    keys = ["sliding_window", "layer_types"]
    if window in (None, 0) or not all_sliding:
        layer.set("has_sliding_window", False, keys, f"{where}; cache config: {code}")
        return
    layer.unknown["has_sliding_window"] = (
        f"{where}; the cache config's window ({code}) is the config's sliding_window "
        f"{window} as transformers' config class for {data.get('model_type')!r} leaves "
        "it (some rewrite or drop it): not read here; pin it by writing "
        "sliding_window (null: none) or layer_types into the config"
    )


def as_config(layer: Layer, capability: str) -> Config:
    values = layer.values
    return Config(
        capability=capability,
        dtype=values["dtype"],
        kv_cache_dtype=values["kv_cache_dtype"],
        head_size=values["head_size"],
        num_heads=values["num_heads"],
        attn_type=values["attn_type"],
        use_mla=values["use_mla"],
        use_sparse=values["use_sparse"],
        has_sink=values["has_sink"],
        use_mm_prefix=values["use_mm_prefix"],
    )
