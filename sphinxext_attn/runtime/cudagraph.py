"""The CUDA Graphs column: what the backend's metadata builder says it supports.

vLLM asks ``get_builder_cls().get_cudagraph_support(vllm_config, kv_cache_spec)``
(older releases read the builder's ``_cudagraph_support``). Most builders return
the class attribute; some compute it from the engine configuration (speculative
decoding, the model's layers) or from the GPU at import (the FlashAttention
version). Those are unknowns naming what they read, never a guess; an answer the
same on every GPU of the grid is no dependency.
"""

from __future__ import annotations

import ast

from sphinxext_attn.model.records import CudagraphAnswer
from sphinxext_attn.pyeval import (
    NODE,
    Bound,
    External,
    Interpreter,
    PyClass,
    PyFunction,
    Raised,
    Unknown,
)
from sphinxext_attn.runtime.declared import CUDAGRAPH_ATTRIBUTE
from sphinxext_attn.runtime.questions import Answer, Asker

#: the builder classmethod vLLM asks (older releases read ``CUDAGRAPH_ATTRIBUTE``)
QUESTION = "get_cudagraph_support"
#: what vLLM passes: outside the tree, so any read of them is an unknown naming it
ARGUMENTS = (External("vllm_config"), External("kv_cache_spec"))
WHAT = {"vllm_config": "the engine configuration", "kv_cache_spec": "the layer's KV cache spec"}


def metadata_builder(interp: Interpreter, cls: PyClass) -> PyClass:
    """``cls.get_builder_cls()``; raises :class:`Unknown` when it is not a tree class."""
    try:
        builder = Asker(interp, cls).call("get_builder_cls")
    except Raised as exc:
        raise Unknown(f"get_builder_cls() raises {exc.kind}: {exc.message}".rstrip(": ")) from exc
    if not isinstance(builder, PyClass):
        raise Unknown(f"get_builder_cls() returns {builder!r}, not a class of the tree")
    return builder


def cudagraph_support(interp: Interpreter, cls: PyClass) -> CudagraphAnswer:
    """``{"level": NAME}`` or ``{"unknown": why}``, with ``assumptions`` (the machine
    facts the answer rests on, ``NAME=VALUE``) where there are any."""
    ask = Asker(interp, cls)
    try:
        builder = metadata_builder(interp, cls)
    except Unknown as exc:
        return CudagraphAnswer(unknown=str(exc))
    builder_ask = Asker(interp, builder)
    if builder_ask.has(QUESTION) is None:
        answer = builder_ask.ask(QUESTION, *ARGUMENTS)
    else:
        answer = _attribute(interp, builder)
    out = _level(answer)
    why = str(out.get("unknown", ""))
    if why and not why.startswith("depends on"):
        reads = _config_reads(builder_ask)
        if reads:
            out["unknown"] = f"depends on the engine configuration ({', '.join(reads)}): {why}"
        else:  # read further down, in a method it calls
            named = [WHAT[a.qualname] for a in ARGUMENTS if f"{a.qualname}." in why]
            if named:
                out["unknown"] = f"depends on {' and '.join(named)}: {why}"
    assumed = [*ask.assumed(), *builder_ask.assumed()]
    if assumed:
        out["assumptions"] = sorted(set(assumed))
    return out


def _attribute(interp: Interpreter, builder: PyClass) -> Answer:
    try:
        with interp.guarded((builder.path, builder.node.lineno)):
            return Answer(interp.getattr(builder, CUDAGRAPH_ATTRIBUTE, NODE, builder.path))
    except Unknown as exc:
        return Answer(unknown=exc)
    except Raised as exc:
        return Answer(raised=f"{exc.kind}: {exc.message}".rstrip(": "))


def _level(answer: Answer) -> CudagraphAnswer:
    if answer.unknown is not None:
        return CudagraphAnswer(unknown=str(answer.unknown))
    if answer.raised:
        return CudagraphAnswer(unknown=f"the builder raises {answer.raised}")
    if not answer.by_capability:
        return _named(answer.value)
    by_level: dict[str, list[str]] = {}
    for cap, value in zip(answer.capabilities, answer.value, strict=True):
        named = _named(value)
        if "unknown" in named:
            return named
        by_level.setdefault(named["level"], []).append(f"{cap[0]}.{cap[1]}")
    if len(by_level) == 1:
        return CudagraphAnswer(level=next(iter(by_level)))
    shown = "; ".join(f"{level} on {', '.join(caps)}" for level, caps in by_level.items())
    return CudagraphAnswer(unknown=f"depends on the GPU: {shown}")


def _named(value: object) -> CudagraphAnswer:
    name = getattr(value, "name", None)
    if isinstance(name, str) and name.isupper():
        return CudagraphAnswer(level=name)
    return CudagraphAnswer(unknown=f"not a member of the release's support enum: {value!r}")


def _config_reads(builder_ask: Asker) -> list[str]:
    """The attributes of its engine-config parameter the builder's method reads."""
    try:
        method = builder_ask.method(QUESTION)
    except (Unknown, Raised):
        return []
    func = method.func if isinstance(method, Bound) else method
    if not isinstance(func, PyFunction) or not isinstance(func.node, ast.FunctionDef):
        return []
    params = [a.arg for a in func.node.args.args]
    if params and params[0] in {"cls", "self"}:
        params = params[1:]
    if not params:
        return []
    config = params[0]
    return sorted(
        {
            f"{config}.{node.attr}"
            for node in ast.walk(func.node)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == config
        }
    )
