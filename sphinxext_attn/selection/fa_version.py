"""Which FlashAttention version the chosen backend would run, where that matters.

A backend whose module asks the release's ``get_flash_attn_version`` runs
the version that function answers for the GPU and the configuration (FA2,
FA3 or FA4); the function is evaluated as vLLM calls it, with the arguments
its signature takes of those the configuration knows (head size, sinks,
block size). Any other backend runs no FlashAttention: there is nothing to name.
"""

from __future__ import annotations

import ast
from typing import Any

from sphinxext_attn.model.selection import Config
from sphinxext_attn.pyeval import NODE, Interpreter, PyFunction, Raised, Unknown
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
    release's function cannot be evaluated statically). Where the backend's
    implementation passes the kernel a literal ``fa_version`` (and only that one),
    that version runs whatever the helper would answer (:func:`passed_version`)."""
    if backend is None:
        return None
    passed = passed_version(interp, backend)
    if passed is not None:
        return passed[0]
    if not uses_flash_attn(interp, backend):
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


def passed_version(interp: Interpreter, backend: str) -> tuple[int, str] | None:
    """The ``fa_version=N`` literal every kernel call of ``backend``'s implementation
    class passes (its own methods; the class ``get_impl_cls`` returns), with the
    place of the first; None where it passes none, several, or a computed one."""
    entry = next((e for e in read_registry(interp.tree) if e.name == backend), None)
    if entry is None:
        return None
    module, _, class_name = entry.class_path.rpartition(".")
    path = interp.tree.module_file(module)
    tree = interp.tree.parse(path) if path else None
    if tree is None or path is None:
        return None
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    impl = classes.get(_impl_name(classes.get(class_name)) or "")
    if impl is None:
        return None
    found: dict[object, int] = {}
    for method in impl.body:
        if not isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for call in (n for n in ast.walk(method) if isinstance(n, ast.Call)):
            for keyword in call.keywords:
                if keyword.arg == "fa_version":
                    value = keyword.value
                    literal = value.value if isinstance(value, ast.Constant) else None
                    found.setdefault(literal, keyword.value.lineno)
    versions = list(found)
    if len(versions) != 1 or type(versions[0]) is not int:
        return None
    return versions[0], f"{path}:{found[versions[0]]}"


def _impl_name(cls: ast.ClassDef | None) -> str | None:
    """The class name the backend's own ``get_impl_cls`` returns."""
    for method in cls.body if cls is not None else []:
        if isinstance(method, ast.FunctionDef) and method.name == "get_impl_cls":
            for node in ast.walk(method):
                if isinstance(node, ast.Return) and isinstance(node.value, ast.Name):
                    return node.value.id
    return None


def _function(interp: Interpreter) -> Any:
    """The release's ``get_flash_attn_version``, from the first module that defines it."""
    return interp.first_defined(FA_UTILS_MODULES, FUNCTION)


__all__ = ["flash_attn_version"]
