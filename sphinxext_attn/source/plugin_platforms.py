"""What a plugin brings, read from its code as written: the platforms its
``vllm.platform_plugins`` entry points answer with (named as the platform class's
``device_name`` or ``device_type`` says), and the registry overrides its package
performs (``@register_backend(AttentionBackendEnum.X)`` on a class,
``register_backend(AttentionBackendEnum.X, "path")``), which hold on its platform.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, replace

from sphinxext_attn.model.plugin import Plugin, Plugins
from sphinxext_attn.source.plugins import find_plugins
from sphinxext_attn.source.tree import SourceTree

#: the attributes of a platform class that name it, in the order they are tried
NAME_ATTRIBUTES = ("device_name", "device_type")
#: a text naming a dotted class (``vllm_ascend.platform.NPUPlatform``)
DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+\Z")
#: the most files of a plugin package searched for registry overrides
MAX_FILES = 5000


@dataclass(frozen=True)
class PluginPlatform:
    """A platform a plugin declares: its name, class and where the entry point is."""

    name: str
    qualname: str
    path: str
    line: int


@dataclass(frozen=True)
class Override:
    """``register_backend(AttentionBackendEnum.NAME)`` performed by a plugin."""

    name: str
    class_path: str
    path: str
    line: int


def plugin_platforms(tree: SourceTree) -> dict[str, PluginPlatform]:
    """The platforms of the tree's plugins by name (none without plugins)."""
    found: dict[str, PluginPlatform] = {}
    for plugin in tree.plugins:
        for platform in platforms_of(tree, plugin):
            found.setdefault(platform.name, platform)
    return found


def platforms_of(tree: SourceTree, plugin: Plugin) -> list[PluginPlatform]:
    """The platforms one of the tree's plugins declares, in its entry points' order
    (an entry point naming no platform class is a warning of the tree)."""
    found: list[PluginPlatform] = []
    for entry in plugin.platform_entries:
        rel = tree.module_file(entry.module)
        module = tree.parse(rel) if rel else None
        function = _function(module, entry.function) if module else None
        qualname = _answered(function) if function else None
        if rel is None or function is None or qualname is None:
            where = rel or f"{entry.module.replace('.', '/')}.py"
            tree.warn(f"platform plugin {entry.name}: names no platform class", where)
            continue
        name = _platform_name(tree, qualname) or entry.name
        found.append(PluginPlatform(name, qualname, rel, function.lineno))
    return found


def _function(module: ast.Module, name: str) -> ast.FunctionDef | None:
    return next(
        (n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == name), None
    )


def _answered(function: ast.FunctionDef) -> str | None:
    """The dotted class name of the entry point's last ``return``."""
    returns = [n for n in ast.walk(function) if isinstance(n, ast.Return) and n.value]
    for ret in sorted(returns, key=lambda r: r.lineno, reverse=True):
        for node in ast.walk(ret):
            text = node.value if isinstance(node, ast.Constant) else None
            if isinstance(text, str) and DOTTED.match(text):
                return text
    return None


def _platform_name(tree: SourceTree, qualname: str) -> str | None:
    """The class's ``device_name`` (else ``device_type``) as its body writes it."""
    module_name, _, class_name = qualname.rpartition(".")
    rel = tree.module_file(module_name)
    module = tree.parse(rel) if rel else None
    body = module.body if module else []
    cls = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == class_name), None)
    if cls is None:
        return None
    values: dict[str, str] = {}
    for stmt in cls.body:
        target, value = _assigned(stmt)
        text = value.value if isinstance(value, ast.Constant) else None
        if target in NAME_ATTRIBUTES and isinstance(text, str) and text.isidentifier():
            values[target] = text
    return next((values[a] for a in NAME_ATTRIBUTES if a in values), None)


def _assigned(stmt: ast.stmt) -> tuple[str, ast.expr | None]:
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return stmt.target.id, stmt.value
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        if isinstance(target, ast.Name):
            return target.id, stmt.value
    return "", None


def platform_package(qualname: str, tree: SourceTree) -> str | None:
    """The plugin package a platform class lives in (None: vLLM's own)."""
    top = qualname.split(".", 1)[0]
    return top if top in tree.plugin_roots else None


def registry_overrides(tree: SourceTree, package: str) -> list[Override]:
    """The registry overrides ``package`` performs, in the order of its files."""
    folder = tree.plugin_roots.get(package)
    if folder is None:
        return []
    found: list[Override] = []
    for rel in _package_files(folder, package):
        text = tree.text(rel)
        if not text or "register_backend(" not in text:
            continue
        module = tree.parse(rel)
        if module is None:
            continue
        dotted = rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        found += _overrides_in(module, dotted, rel)
    return found


def _package_files(folder: os.PathLike[str] | str, package: str) -> list[str]:
    """The package's ``.py`` files, tree-relative, sorted; links are not followed
    (a linked file is looked at through the tree, which refuses one leading out)."""
    base = os.path.join(folder, package)
    out: list[str] = []
    for here, dirs, files in os.walk(base, followlinks=False):
        dirs.sort()
        rel_here = os.path.relpath(here, folder).replace(os.sep, "/")
        out += [f"{rel_here}/{f}" for f in sorted(files) if f.endswith(".py")]
        if len(out) > MAX_FILES:
            break
    return sorted(out)[:MAX_FILES]


def _overrides_in(module: ast.Module, dotted: str, rel: str) -> list[Override]:
    found: list[Override] = []
    for node in ast.walk(module):
        if isinstance(node, ast.ClassDef):
            for decorator in node.decorator_list:
                name = _registered_name(decorator)
                if name:
                    found.append(Override(name, f"{dotted}.{node.name}", rel, node.lineno))
        elif isinstance(node, ast.Call) and len(node.args) >= 2:
            name = _registered_name(node)
            path = node.args[1]
            if name and isinstance(path, ast.Constant) and isinstance(path.value, str):
                found.append(Override(name, path.value, rel, node.lineno))
    return sorted(found, key=lambda o: o.line)


def _registered_name(node: ast.expr) -> str | None:
    """``register_backend(AttentionBackendEnum.NAME, ...)`` -> ``NAME``."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    first = node.args[0]
    if called != "register_backend" or not isinstance(first, ast.Attribute):
        return None
    if any(k.arg == "is_mamba" for k in node.keywords):
        return None  # a Mamba backend's registry, not the attention one
    return first.attr


def read_plugins(root: str | os.PathLike[str], folders: list[str]) -> Plugins:
    """The plugins ``folders`` hold, read as plugins of the tree at ``root``, each
    naming the platforms it brings (:class:`~sphinxext_attn.source.plugins.PluginError`
    names a folder holding none). The caller hands them to the trees it makes and
    checks platform names against them."""
    plugins = find_plugins(folders)
    if not plugins:
        return plugins
    tree = SourceTree(root, plugins=plugins)
    return tuple(
        replace(plugin, platforms=tuple(p.name for p in platforms_of(tree, plugin)))
        for plugin in plugins
    )
