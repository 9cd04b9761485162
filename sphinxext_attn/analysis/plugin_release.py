"""The vLLM release a plugin targets, where it says so (a requirement, a Dockerfile,
its docs configuration, an installed distribution's metadata), against the tree's:
a pairing of releases that do not belong together is one clear warning."""

from __future__ import annotations

import os
import re
from pathlib import Path

from sphinxext_attn.model.plugin import Plugins
from sphinxext_attn.page.version import read_version
from sphinxext_attn.source.tree import SourceTree

#: a pin of vLLM's release in a requirement, a Dockerfile or a docs configuration
VLLM_PIN = re.compile(
    r"""(?im)^[^#\n]*\bvllm(?:-openai)?\s*(?:==|@\s*v?|:\s*v?|=\s*["']v?)\s*(\d+\.\d+\.\d+)"""
)
#: the files of a plugin folder a pin is looked for in (those present)
PIN_FILES = (
    "requirements.txt",
    "requirements/common.txt",
    "Dockerfile",
    "docs/source/conf.py",
    "docs/conf.py",
)


def targeted_release(plugin_folder: os.PathLike[str] | str) -> tuple[str, str] | None:
    """The vLLM release a plugin says it targets, and the file saying so."""
    folder = Path(plugin_folder)
    names = [*PIN_FILES]
    names += [str(p.relative_to(folder)) for p in sorted(folder.glob("*.dist-info/METADATA"))]
    for name in names:
        path = folder / name
        real = os.path.realpath(path)
        if not real.startswith(str(folder.resolve()) + os.sep) or not os.path.isfile(real):
            continue
        text = Path(real).read_text(encoding="utf-8", errors="replace")[:200_000]
        text = text.replace("Requires-Dist: vllm", "vllm")
        found = VLLM_PIN.search(text)
        if found:
            return found.group(1), name
    return None


def release_mismatches(root: str | os.PathLike[str], plugins: Plugins) -> list[str]:
    """One warning per plugin of ``plugins`` whose targeted vLLM release is not the
    tree's."""
    version = read_version(SourceTree(root, plugins=plugins))
    out: list[str] = []
    for plugin in plugins:
        found = targeted_release(plugin.folder)
        if found and version and found[0] != version:
            out.append(
                f"{plugin.folder}: {', '.join(plugin.packages)} targets vLLM {found[0]} "
                f"({found[1]}), the tree is vLLM {version}"
            )
    return out
