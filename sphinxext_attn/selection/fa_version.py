"""Which FlashAttention version the chosen backend would run, where that matters.

A backend whose module asks the release's ``get_flash_attn_version`` runs
the version that function answers for the GPU and the configuration (FA2,
FA3 or FA4); the function is evaluated as vLLM calls it, with the arguments
its signature takes of those the configuration knows (head size, sinks,
block size). Any other backend runs no FlashAttention: there is nothing to name.
"""

from __future__ import annotations

from typing import Any

from sphinxext_attn.model.selection import Config
from sphinxext_attn.pyeval import Interpreter, Raised, Unknown
from sphinxext_attn.pyeval.values import NODE, PyFunction
from sphinxext_attn.source.registry import read_registry
from sphinxext_attn.vocab.paths import FA_UTILS_MODULES

FUNCTION = "get_flash_attn_version"
#: Where the release defines it (newest first).


def _arguments(config: Config) -> dict[str, Any]:
    return {
        "head_size": config.head_size,
        "has_sinks": config.has_sink,
        "kv_cache_block_size": config.block_size,
    }


def uses_flash_attn(interp: Interpreter, backend: str) -> bool:
    """Whether the module of ``backend``'s class asks for the FlashAttention version."""
    entry = next((e for e in read_registry(interp.tree) if e.name == backend), None)
    if entry is None:
        return False
    module = entry.class_path.rpartition(".")[0]
    path = interp.tree.module_file(module)
    text = interp.tree.text(path) if path else None
    return bool(text) and FUNCTION in (text or "")


def flash_attn_version(interp: Interpreter, config: Config, backend: str | None) -> int | None:
    """The version ``backend`` would run for ``config`` (None: it runs none, or the
    release's function cannot be evaluated statically)."""
    if backend is None or not uses_flash_attn(interp, backend):
        return None
    try:  # the module may not parse, or its function may not be evaluable
        function = _function(interp)
        if not isinstance(function, PyFunction):
            return None
        args = function.node.args
        names = {a.arg for a in (*args.args, *args.kwonlyargs)}
        kwargs = {k: v for k, v in _arguments(config).items() if k in names}
        with interp.question(capability=config.capability_tuple, steps=None):
            version = interp.call(function, [], kwargs, NODE, function.path)
    except (Unknown, Raised):
        return None
    return version if isinstance(version, int) and not isinstance(version, bool) else None


def _function(interp: Interpreter) -> Any:
    """The release's ``get_flash_attn_version``, from the first module that defines it."""
    for dotted in FA_UTILS_MODULES:
        module = interp.module(dotted)
        if module is not None and module.has(FUNCTION):
            return module.lookup(FUNCTION, interp, NODE)
    return None


__all__ = ["flash_attn_version"]
