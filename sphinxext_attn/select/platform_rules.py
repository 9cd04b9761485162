"""Platforms without a priority list (XPU, CPU): their ``get_attn_backend_cls`` is an
ordered ``if``/``else``; the decision is the backend it returns, or what it raises."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sphinxext_attn.pyeval import Interpreter, Raised, Unknown
from sphinxext_attn.pyeval.values import Bound, Instance
from sphinxext_attn.select.decision import NODE, Config, Decision, param_names

if TYPE_CHECKING:
    from sphinxext_attn.select.decision import Selector


def decide_by_rule(selector: Selector, config: Config, platform: Instance) -> Decision:
    """The backend a platform's ``get_attn_backend_cls`` returns with no backend
    requested (its ordered rules: XPU, CPU), or what it raises."""
    interp = selector.interp
    method = interp.getattr(platform, "get_attn_backend_cls", NODE, "")
    params = param_names(method.func.node) if isinstance(method, Bound) else []
    kwargs: dict[str, Any] = {"attn_selector_config": selector.build_config(config)}
    if "selected_backend" in params:
        kwargs["selected_backend"] = None
    if "num_heads" in params:
        kwargs["num_heads"] = config.num_heads
    try:
        path = interp.call(method, [], kwargs, NODE, "")
    except Raised as exc:
        return Decision(None, [], raised=f"{exc.kind}: {exc.message}")
    if not isinstance(path, str):
        raise Unknown("get_attn_backend_cls answered no class path")
    name = backend_of_path(interp, path)
    return Decision(name, [name])


def backend_of_path(interp: Interpreter, path: str) -> str:
    """The registry's name for a backend class path (the class name when the
    registry does not list it)."""
    from sphinxext_attn.source.registry import read_registry

    for entry in read_registry(interp.tree):
        if entry.class_path == path:
            return entry.name
    return path.rpartition(".")[2]
