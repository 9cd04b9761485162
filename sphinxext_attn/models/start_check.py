"""Will the engine start: the selected backend's implementation class checks
the layer when it is built (``TritonAttentionImpl.__init__`` refuses an fp8 KV
cache below SM 8.9). Its ``__init__`` is run leniently (:mod:`.lenient`) with
the layer's values, on the question's GPU; a ``raise`` reached is the refusal,
in vLLM's words."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from sphinxext_attn.model.selection import Config
from sphinxext_attn.models.lenient import Refused, Run, new_frame, run_until
from sphinxext_attn.pyeval import (
    NODE,
    EnumMember,
    Instance,
    Interpreter,
    PyClass,
    PyFunction,
    Raised,
    Unknown,
)
from sphinxext_attn.source.registry import read_registry

STEPS = 200_000


@dataclass
class StartCheck:
    """The refusal (None: none reached) and what the run could not follow."""

    error: str | None
    where: str | None
    skipped: list[str]
    unknown: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"start_error": self.error}
        if self.where:
            data["start_error_source"] = self.where
        if self.unknown:
            data["start_unknown"] = self.unknown
        return data


def _impl_class(interp: Interpreter, backend: str) -> PyClass:
    entry = next((e for e in read_registry(interp.tree) if e.name == backend), None)
    if entry is None:
        raise Unknown(f"{backend} is not in the backend registry")
    dotted, _, name = entry.class_path.rpartition(".")
    module = interp.module(dotted)
    if module is None:
        raise Unknown(f"module {dotted} of {backend} cannot be read")
    cls = module.lookup(name, interp, NODE)
    impl = interp.call(interp.getattr(cls, "get_impl_cls", NODE, module.path), [], {}, NODE, "")
    if not isinstance(impl, PyClass):
        raise Unknown(f"{backend}.get_impl_cls() is not a class of the tree")
    return impl


def _attn_type(interp: Interpreter, impl: PyClass, name: str) -> Any:
    enum = impl.module.lookup("AttentionType", interp, NODE)
    member = interp.getattr(enum, name, NODE, impl.path)
    return member if isinstance(member, EnumMember) else name.lower()


def check_start(
    interp: Interpreter, backend: str | None, config: Config, num_kv_heads: int | None
) -> StartCheck:
    """Run ``backend``'s implementation ``__init__`` for a layer of ``config``."""
    if backend is None:
        return StartCheck(None, None, [])
    try:
        with interp.question(capability=config.capability_tuple, steps=STEPS):
            impl = _impl_class(interp, backend)
            init, owner = interp.class_attr(impl, "__init__")
            if not isinstance(init, PyFunction) or isinstance(init.node, ast.Lambda):
                return StartCheck(None, None, [], f"{impl.name}.__init__ is not in the tree")
            heads = config.num_heads or num_kv_heads or 1
            values: dict[str, Any] = {
                "self": Instance(impl),
                "num_heads": heads,
                "head_size": config.head_size,
                "scale": float(config.head_size) ** -0.5,
                "num_kv_heads": num_kv_heads or heads,
                "alibi_slopes": None,
                "sliding_window": None,
                "kv_cache_dtype": config.kv_cache_dtype or "auto",
                "logits_soft_cap": None,
                "attn_type": _attn_type(interp, impl, config.attn_type),
                "kv_sharing_target_layer_name": None,
            }
            if not config.has_sink:
                values["sinks"] = None
            frame = new_frame(init.module, values)
            run = Run(owner=owner if isinstance(owner, PyClass) else impl)
            run_until(interp, init.node.body, frame, None, run)
    except Refused as refused:
        return StartCheck(f"{refused.kind}: {refused.message}", str(refused.where), [])
    except (Unknown, Raised) as exc:
        return StartCheck(None, None, [], f"{backend}'s implementation not evaluated: {exc}")
    if run.open_checks:
        return StartCheck(None, None, run.skipped, "; ".join(run.open_checks))
    return StartCheck(None, None, run.skipped)
