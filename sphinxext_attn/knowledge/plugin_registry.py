"""A plugin's registry overrides, in force on its platform: vLLM runs the plugin's
``register_backend(AttentionBackendEnum.X)`` when it loads the platform's package, so
on that platform ``X.get_path()`` answers the plugin's class (on TPU,
``FLASH_ATTN`` is tpu-inference's Pallas backend, not CUDA FlashAttention)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sphinxext_attn.pyeval import NODE, EnumMember, PyClass, Raised, Unknown
from sphinxext_attn.source.plugin_platforms import Override, registry_overrides
from sphinxext_attn.vocab.names import REGISTRY_ENUM
from sphinxext_attn.vocab.paths import REGISTRY_FILES

if TYPE_CHECKING:
    from sphinxext_attn.pyeval import Interpreter

#: the registry's dict of overridden class paths (``get_path`` reads it first)
OVERRIDES_DICT = "_ATTN_OVERRIDES"


def plugin_overrides(interp: Interpreter, platform_file: str) -> list[Override]:
    """The overrides of the plugin package holding ``platform_file`` (none for vLLM's)."""
    package = platform_file.split("/", 1)[0]
    if package not in interp.tree.plugin_roots:
        return []
    return registry_overrides(interp.tree, package)


def apply_overrides(interp: Interpreter, platform_file: str) -> list[Override]:
    """Write the overrides into the tree's registry, as the plugin's import does;
    an override of a name the enum lacks is a warning naming the file."""
    overrides = plugin_overrides(interp, platform_file)
    if not overrides:
        return []
    for rel in REGISTRY_FILES:
        module = interp.module(rel.removesuffix(".py").replace("/", "."))
        if module is None or not module.has(REGISTRY_ENUM) or not module.has(OVERRIDES_DICT):
            continue
        try:
            enum = module.lookup(REGISTRY_ENUM, interp, NODE)
            table = module.lookup(OVERRIDES_DICT, interp, NODE)
        except (Unknown, Raised):
            return []
        if not isinstance(enum, PyClass) or not isinstance(table, dict):
            return []
        for override in overrides:
            member = interp.class_own_attr(enum, override.name)
            if isinstance(member, EnumMember):
                table[member] = override.class_path
            else:
                interp.tree.warn(
                    f"register_backend: {override.name} is no {REGISTRY_ENUM} member",
                    override.path,
                    override.line,
                    "registry",
                )
        return overrides
    return []
