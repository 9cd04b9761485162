"""vLLM platform plugins read as part of the tree: which packages a plugin folder holds
and which platforms it declares, found from its files alone (never imported).

A plugin folder holds a package (``tpu_inference/``, ``vllm_ascend/``) and, for an
installed distribution or a checkout, its metadata: a ``*.dist-info`` or
``*.egg-info`` ``entry_points.txt``, a ``setup.py`` or a ``pyproject.toml``. The
entry points of the ``vllm.platform_plugins`` group name the function vLLM calls to
find the platform class; the other ``vllm.*`` groups name the package. Each folder
is a root of its own: files of its packages are read inside it only (see
:class:`~sphinxext_attn.source.tree.SourceTree`).
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable
from pathlib import Path

from sphinxext_attn.model.plugin import EntryPoint, Plugin, Plugins

#: ``name = module:function`` in an entry-point declaration
ENTRY = re.compile(r"""["']?([A-Za-z0-9_.-]+)["']?\s*=\s*["']?([A-Za-z_][\w.]*):([A-Za-z_]\w*)""")
#: a group header of entry_points.txt, or a pyproject.toml entry-point table
GROUP = re.compile(r"""^\s*\[(?:project\.entry-points\.)?["']?([\w.]+)["']?\]\s*$""")
#: folders beside a plugin's package that are no part of it
NOT_PACKAGES = frozenset({"tests", "test", "tools", "docs", "examples", "benchmarks", "csrc"})
#: the metadata files read, each at most this large
MAX_METADATA_BYTES = 512 * 1024


class PluginError(ValueError):
    """A plugin folder that holds no package; the message names the folder."""


def _read(path: Path, folder: Path) -> str:
    """A metadata file's text when it lies inside ``folder`` (symlinks resolved)."""
    real = os.path.realpath(path)
    if not real.startswith(str(folder).rstrip(os.sep) + os.sep) or not os.path.isfile(real):
        return ""
    if os.path.getsize(real) > MAX_METADATA_BYTES:
        return ""
    try:
        return Path(real).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def read_entry_points(text: str) -> list[EntryPoint]:
    """Entry points of an ``entry_points.txt`` or ``pyproject.toml`` (``[group]``
    headers), or of a ``setup.py`` (``entry_points={"group": ["n = m:f"]}``)."""
    found: list[EntryPoint] = []
    if "entry_points" in text and ("setup(" in text or "setuptools" in text):
        found += _setup_py_entries(text)
    group = ""
    for line in text.splitlines():
        header = GROUP.match(line)
        if header:
            group = header.group(1)
            continue
        match = ENTRY.match(line.strip())
        if match and group.startswith("vllm."):
            found.append(EntryPoint(group, match.group(1), match.group(2), match.group(3)))
    return list(dict.fromkeys(found))


def _setup_py_entries(text: str) -> list[EntryPoint]:
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    found: list[EntryPoint] = []
    for node in ast.walk(module):
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values, strict=False):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                continue
            if not key.value.startswith("vllm.") or not isinstance(value, ast.List | ast.Tuple):
                continue
            for item in value.elts:
                if isinstance(item, ast.Constant) and isinstance(item.value, str):
                    match = ENTRY.match(item.value.strip())
                    if match:
                        found.append(EntryPoint(key.value, *match.groups()))
    return found


def installed_distribution(name: str) -> tuple[Path, str] | None:
    """The folder of an installed distribution ``name`` (its ``site-packages``) and its
    metadata folder, from the installer's records alone (nothing is imported)."""
    # lazy: importlib.metadata adds 18 ms to a warm select run (-X importtime, median of 7)
    from importlib import metadata

    try:
        dist = metadata.distribution(name)
    except (metadata.PackageNotFoundError, ValueError):
        return None
    info = getattr(dist, "_path", None)  # the .dist-info folder of a path distribution
    if info is None:
        return None
    return Path(os.path.realpath(Path(info).parent)), Path(info).name


def find_plugin(folder: str | os.PathLike[str]) -> Plugin:
    """The plugin held by ``folder`` (or the installed distribution of that name);
    :class:`PluginError` when it holds no package."""
    real = Path(os.path.realpath(folder))
    only: str | None = None
    if not real.is_dir() and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", os.fspath(folder)):
        installed = installed_distribution(os.fspath(folder))
        if installed is not None:
            real, only = installed
    if not real.is_dir():
        raise PluginError(f"{folder}: not a folder, nor an installed distribution")
    metadata = [real / "setup.py", real / "pyproject.toml"]
    try:
        names = sorted(os.listdir(real))
    except OSError as exc:
        raise PluginError(f"{folder}: cannot be listed ({exc.strerror})") from None
    if only is not None:  # a site-packages: that distribution's metadata alone
        metadata = [real / only / "entry_points.txt"]
    for name in names:
        if only is None and name.endswith((".dist-info", ".egg-info")):
            metadata.append(real / name / "entry_points.txt")
    entries = [e for path in metadata for e in read_entry_points(_read(path, real))]
    named = [e.module.split(".")[0] for e in entries]
    present = [
        n
        for n in names
        if n.isidentifier()
        and n != "vllm"
        and n not in NOT_PACKAGES
        and os.path.isfile(real / n / "__init__.py")
    ]
    packages = [n for n in dict.fromkeys(named) if n in present] or (
        present if only is None else []
    )
    if not packages:
        raise PluginError(
            f"{folder}: holds no plugin package (a folder with __init__.py beside its "
            "metadata, e.g. tpu_inference/ or vllm_ascend/)"
        )
    return Plugin(real, tuple(packages), tuple(entries))


def find_plugins(folders: Iterable[str | os.PathLike[str]]) -> Plugins:
    """The plugins ``folders`` hold, in their order (none given: none);
    :class:`PluginError` names a folder that holds none, or a package two hold."""
    plugins = tuple(find_plugin(f) for f in folders)
    taken: dict[str, Path] = {}
    for plugin in plugins:
        for package in plugin.packages:
            if package in taken and taken[package] != plugin.folder:
                raise PluginError(
                    f"{plugin.folder}: package {package} is also in {taken[package]}"
                )
            taken[package] = plugin.folder
    return plugins


def package_folders(plugins: Iterable[Plugin]) -> dict[str, Path]:
    """Top-level package name -> the plugin folder holding it."""
    return {p: plugin.folder for plugin in plugins for p in plugin.packages}
