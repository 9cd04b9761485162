"""vLLM's reading of a model's config, evaluated from the release's own
convertor (``ModelArchConfigConvertorBase`` and its per-model-type subclasses):
head size, MLA, the number of layers and heads.

The config is given to the evaluator as an object holding exactly the keys of
``config.json``. A key the file leaves out is absent here, where transformers'
config class would supply its default: such a read is reported, never guessed.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from sphinxext_attn.model.records import Location
from sphinxext_attn.pyeval import NODE, Instance, Interpreter, PyClass, Raised, Unknown
from sphinxext_attn.vocab.paths import CONFIG_CONVERTOR_MODULE

CONVERTOR_MODULE = CONFIG_CONVERTOR_MODULE
BASE_CONVERTOR = "ModelArchConfigConvertorBase"
CONVERTOR_TABLE = "MODEL_ARCH_CONFIG_CONVERTORS"
#: the convertor methods read, and the name each answer is kept under
QUESTIONS = {
    "get_head_size": "head_size",
    "is_deepseek_mla": "is_deepseek_mla",
    "get_num_hidden_layers": "num_hidden_layers",
    "get_total_num_attention_heads": "num_attention_heads",
}
STEPS = 200_000


@dataclass
class Reading:
    """Each answer (or None) with where it came from, or why it is unknown."""

    values: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, Location] = field(default_factory=dict)
    unknown: dict[str, str] = field(default_factory=dict)
    convertor: str = BASE_CONVERTOR


def _config_object(module: Any, data: dict[str, Any]) -> Instance:
    """An attribute bag holding the keys of ``config.json`` (JSON values only)."""
    node = ast.parse("class PretrainedConfig:\n    pass\n").body[0]
    assert isinstance(node, ast.ClassDef)
    cls = PyClass("PretrainedConfig", node, module, module)
    fields = {k: v for k, v in data.items() if isinstance(k, str) and k.isidentifier()}
    return Instance(cls, fields=fields)


def read_config(interp: Interpreter, data: dict[str, Any]) -> Reading:
    """The convertor's answers for ``data`` (each unknown with its reason)."""
    reading = Reading()
    module = interp.module(CONVERTOR_MODULE)
    if module is None or not module.has(BASE_CONVERTOR):
        why = f"no {BASE_CONVERTOR} in {CONVERTOR_MODULE} (this release reads configs elsewhere)"
        reading.unknown = dict.fromkeys(QUESTIONS.values(), why)
        return reading
    try:
        convertor: Any = module.lookup(BASE_CONVERTOR, interp, NODE)
        if module.has(CONVERTOR_TABLE):
            table = module.lookup(CONVERTOR_TABLE, interp, NODE)
            if isinstance(table, dict):
                convertor = table.get(data.get("model_type"), convertor)
    except (Unknown, Raised) as exc:
        reading.unknown = dict.fromkeys(QUESTIONS.values(), f"convertor not evaluated: {exc}")
        return reading
    reading.convertor = getattr(convertor, "name", BASE_CONVERTOR)
    config = _config_object(module, data)
    this = Instance(convertor, fields={"hf_config": config, "hf_text_config": config})
    for method, name in QUESTIONS.items():
        try:
            with interp.question(capability=None, steps=STEPS):
                function = interp.getattr(this, method, NODE, module.path)
                reading.values[name] = interp.call(function, [], {}, NODE, module.path)
            found = getattr(getattr(function, "func", None), "node", None)
            line = getattr(found, "lineno", 0)
            path = getattr(getattr(function, "func", None), "path", module.path)
            reading.sources[name] = Location(path, line)
        except (Unknown, Raised) as exc:
            reading.unknown[name] = f"{reading.convertor}.{method} not evaluated: {exc}"
    return reading
