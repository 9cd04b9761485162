"""Each layer's sliding window, as the model's own constructor computes the
``per_layer_sliding_window`` it passes: the constructing method runs leniently
(:mod:`.lenient`) for layer ``i`` (``prefix`` ``model.layers.i.self_attn``,
``layer_idx`` ``i``), then the keyword's value is evaluated."""

from __future__ import annotations

from typing import Any

from sphinxext_attn.models.lenient import Refused, Run, new_frame, run_until
from sphinxext_attn.models.model_file import WindowSite
from sphinxext_attn.pyeval import NODE, Instance, Interpreter, PyClass, Raised, Unknown

STEPS = 100_000


def layer_window(
    interp: Interpreter, module: str, site: WindowSite, config: Instance, index: int
) -> tuple[bool | None, str]:
    """(has a sliding window, None: unknown; the reason or the source)."""
    scope = interp.module(module)
    if scope is None:
        return None, f"module {module} cannot be read"
    path = scope.path
    try:
        cls = scope.lookup(site.class_name, interp, NODE)
    except (Unknown, Raised) as exc:
        return None, f"class {site.class_name} not evaluated: {exc}"
    fields = {"config": config, "layer_idx": index}
    this = Instance(cls, fields=fields) if isinstance(cls, PyClass) else None
    values: dict[str, Any] = {
        "self": this,
        "config": config,
        "layer_idx": index,
        "prefix": f"model.layers.{index}.self_attn",
        "cache_config": None,
        "quant_config": None,
    }
    frame = new_frame(scope, values)
    run = Run()
    try:
        with interp.question(capability=None, steps=STEPS):
            run_until(interp, site.method.body, frame, site.call, run)
            window = interp.eval(site.value, frame)
    except Refused as refused:
        return None, f"the layer's constructor raises at {refused.where}"
    except (Unknown, Raised) as exc:
        why = f"{path}:{site.value.lineno}: per_layer_sliding_window not evaluated ({exc})"
        return None, why
    if window is not None and not (isinstance(window, int) and not isinstance(window, bool)):
        return None, f"{path}:{site.value.lineno}: per_layer_sliding_window is {window!r}"
    return window is not None, f"{path}:{site.value.lineno}"
