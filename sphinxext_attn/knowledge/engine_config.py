"""The engine config the code reads: ``VllmConfig`` fields as set by ``--option``,
else their declared defaults (never constructed: vLLM's ``VllmConfig()``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sphinxext_attn.model.environment import Environment, literal_of
from sphinxext_attn.pyeval import (
    Foreign,
    PyClass,
    Unknown,
    Value,
    class_mro,
    label,
    statements_for,
)

if TYPE_CHECKING:
    from sphinxext_attn.pyeval import Interpreter


#: vLLM's getters of the engine config in use: the first answers vLLM's default
#: config when none is set, the second None
CURRENT_CONFIG = "get_current_vllm_config"
CURRENT_CONFIG_OR_NONE = "get_current_vllm_config_or_none"
CONFIG_GETTERS = (CURRENT_CONFIG, CURRENT_CONFIG_OR_NONE)


@dataclass(eq=False)
class ConfigDefaults(Foreign):
    """vLLM's default engine config, read from the field defaults of its config
    classes (``attention_config`` -> ``AttentionConfig()``), never constructed."""

    cls: PyClass
    #: the dotted path of this config in ``VllmConfig`` (``attention_config.``)
    prefix: str = ""


def config_attr(
    environment: Environment, interp: Interpreter, config: ConfigDefaults, name: str
) -> Value:
    """A field of the engine config: as set (``--option``), else its declared default."""
    field = f"{config.prefix}{name}"
    if field in environment.options:
        value = environment.options[field]
        interp.note_fact(field, value)
        return literal_of(value)
    value = _config_default(interp, config, name)
    if value is None and any(k.startswith(f"{field}.") for k in environment.options):
        value = _config_class(interp, config, name)  # a sub-config set by --option
    if isinstance(value, ConfigDefaults):
        value.prefix = f"{field}."
    else:
        interp.note_fact(field, f"default ({label(value)})")
    return value


def _config_class(interp: Interpreter, config: ConfigDefaults, name: str) -> Value:
    """The config class a field is declared with (``model_config: ModelConfig``)."""
    for klass, stmt in _declarations(interp, config, name):
        annotation = stmt.annotation
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            annotation = ast.parse(annotation.value, mode="eval").body
        try:
            cls = interp.eval(annotation, interp.class_body_scope(klass))
        except Unknown:
            return None
        return ConfigDefaults(cls) if isinstance(cls, PyClass) else None
    return None


def _declarations(
    interp: Interpreter, config: ConfigDefaults, name: str
) -> Iterator[tuple[PyClass, ast.AnnAssign]]:
    """Each annotated declaration of field ``name`` along the config class's MRO, nearest first
    (a class body parsed whole holds other fields too: the name is checked here, once)."""
    for klass in class_mro(config.cls, interp):
        if not isinstance(klass, PyClass):
            continue
        for stmt in statements_for(klass.node, name):
            if not isinstance(stmt, ast.AnnAssign):
                continue
            if isinstance(stmt.target, ast.Name) and stmt.target.id == name:
                yield klass, stmt


def _config_default(interp: Interpreter, config: ConfigDefaults, name: str) -> Value:
    for klass, stmt in _declarations(interp, config, name):
        scope = interp.class_body_scope(klass)
        value = stmt.value
        if value is None:
            raise Unknown(f"config field {name} has no default", klass.path, stmt.lineno)
        if isinstance(value, ast.Call) and getattr(
            value.func, "id", getattr(value.func, "attr", "")
        ) in ("Field", "field"):
            for kw in value.keywords:
                if kw.arg == "default_factory":
                    factory = interp.eval(kw.value, scope)
                    if isinstance(factory, PyClass):
                        return ConfigDefaults(factory)
                    raise Unknown(
                        f"config field {name}: factory not evaluated",
                        klass.path,
                        stmt.lineno,
                    )
                if kw.arg == "default":
                    return interp.eval(kw.value, scope)
            raise Unknown(f"config field {name} has no default", klass.path, stmt.lineno)
        return interp.eval(value, scope)
    raise Unknown(f"engine config has no field {name}", config.cls.path)
