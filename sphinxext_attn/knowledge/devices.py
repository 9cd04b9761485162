"""The machine's GPU and platform, as the tree's own code finds them.

vLLM picks its platform class by calling the detection plugins of
``vllm/platforms/__init__.py`` (``builtin_platform_plugins``): each returns the
dotted name of its platform class when its hardware is there. The machine is
one platform, so the class is the one its plugin names; nothing here lists
platform classes. On ROCm the GPU is what ``amdsmi`` reports at import
(``target_graphics_version``, e.g. ``gfx942``): the release's own code derives
everything else from it (``_GCN_ARCH``, ``on_gfx9()``, the capability).
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from sphinxext_attn.knowledge.plugin_registry import apply_overrides
from sphinxext_attn.pyeval import NODE, External, Instance, PyClass, Unknown, Value
from sphinxext_attn.source.plugin_platforms import plugin_platforms
from sphinxext_attn.vocab.paths import PLATFORM_INIT_FILE, PLATFORM_PACKAGE

if TYPE_CHECKING:
    from sphinxext_attn.pyeval import Interpreter

PLUGINS = "builtin_platform_plugins"
#: A qualified class name in a plugin's answer (``"vllm.platforms.rocm.RocmPlatform"``).
QUALNAME = re.compile(r"vllm(\.[A-Za-z_][A-Za-z0-9_]*)+\Z")
#: A yes/no question to the hardware through torch (``torch.cpu._is_amx_tile_supported``).
HARDWARE_PROBE = re.compile(r"torch\.[a-z]+\._?is_[a-z0-9_]+\Z")


def platform_class(interp: Interpreter, platform: str) -> PyClass:
    """The class vLLM's detection plugin for ``platform`` answers with (or, for a
    platform a plugin brings, the class its ``vllm.platform_plugins`` entry names)."""
    brought = plugin_platforms(interp.tree).get(platform)
    if brought is not None:
        return _class_named(interp, brought.qualname, brought.path, brought.line)
    package = interp.module(PLATFORM_PACKAGE)
    where = PLATFORM_INIT_FILE
    if package is None or not package.has(PLUGINS):
        raise Unknown(f"no {PLUGINS} in the tree to find the {platform} platform", where)
    plugins = package.lookup(PLUGINS, interp, NODE)
    plugin = plugins.get(platform) if isinstance(plugins, dict) else None
    node = getattr(plugin, "node", None)
    if not isinstance(node, ast.FunctionDef):
        raise Unknown(f"no detection plugin for the {platform} platform", package.path)
    qualname = _answered_class(node)
    if qualname is None:
        raise Unknown(f"the {platform} plugin names no platform class", package.path, node.lineno)
    return _class_named(interp, qualname, package.path, node.lineno)


def _class_named(interp: Interpreter, qualname: str, where: str, line: int) -> PyClass:
    module_name, _, class_name = qualname.rpartition(".")
    module = interp.module(module_name)
    if module is None or not module.has(class_name):
        raise Unknown(f"{qualname} is not in the tree", where, line)
    cls = module.lookup(class_name, interp, NODE)
    if isinstance(cls, External) and not cls.qualname.startswith("vllm."):
        package = cls.qualname.split(".", 1)[0]
        raise Unknown(
            f"{qualname} is {cls.qualname}, in {package}, which is not given: name the folder "
            "holding it with --plugin DIR (conf.py: attention_backends_plugins)",
            module.path,
        )
    if not isinstance(cls, PyClass):
        raise Unknown(f"{qualname} is not a class", module.path)
    return cls


def _answered_class(node: ast.FunctionDef) -> str | None:
    """The class name in the plugin's last ``return`` (the platform found: earlier
    returns are variants, such as a CPU plugin's vendor-specific class)."""
    returns = [n for n in ast.walk(node) if isinstance(n, ast.Return) and n.value is not None]
    for ret in sorted(returns, key=lambda r: r.lineno, reverse=True):
        names = [
            c.value
            for c in ast.walk(ret)
            if isinstance(c, ast.Constant) and isinstance(c.value, str) and QUALNAME.match(c.value)
        ]
        if names:
            return names[0]
    return None


def platform_instance(interp: Interpreter, platform: str) -> Instance:
    """The platform, with the registry overrides its plugin package performs applied
    (they run when vLLM loads the platform's package)."""
    cls = platform_class(interp, platform)
    apply_overrides(interp, cls.path)
    return Instance(cls)


# -- amdsmi: what the ROCm GPU reports ---------------------------------------------
def amdsmi_call(interp: Interpreter, name: str, arch: str) -> Value:
    """The answer of an ``amdsmi`` function on a machine with one GPU of ``arch``;
    Ellipsis for a name that is not a query this machine answers."""
    function = name.rsplit(".", 1)[-1]
    if function in ("amdsmi_init", "amdsmi_shut_down"):
        return None
    if function == "amdsmi_get_processor_handles":
        return [External("amdsmi.processor_handle")]
    if function == "amdsmi_get_gpu_asic_info":
        interp.note_fact("arch", arch)
        return {"target_graphics_version": arch, "market_name": arch}
    return Ellipsis
