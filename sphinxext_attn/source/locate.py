"""Find the vLLM source tree without Sphinx and without importing vLLM.

Shared by the Sphinx extension (``attention_backends_root`` unset) and the
command line (no ``--root``). An installed ``vllm`` is located with
:func:`importlib.util.find_spec` on the top-level name, which finds the
package folder without executing it.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path


def installed_vllm_root() -> str | None:
    """The folder holding an installed ``vllm`` package, without importing it."""
    try:
        spec = importlib.util.find_spec("vllm")
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    locations = list(spec.submodule_search_locations or [])
    if not locations and spec.origin:
        locations = [os.path.dirname(spec.origin)]
    for loc in locations:
        if os.path.isdir(loc):
            return os.path.dirname(os.path.abspath(loc))
    return None


def holds_vllm(folder: str | os.PathLike[str]) -> bool:
    """Whether ``folder`` is a vLLM source tree (it holds a ``vllm/`` folder)."""
    return (Path(folder) / "vllm").is_dir()


def default_root(cwd: str | os.PathLike[str] = ".") -> tuple[str | None, str]:
    """The tree to use when none is named, and how it was found.

    The current folder if it holds ``vllm/`` (a checkout, as in a pre-commit
    run), else the installed ``vllm`` distribution, else ``(None, reason)``.
    """
    if holds_vllm(cwd):
        return str(Path(cwd).resolve()), "the current folder"
    installed = installed_vllm_root()
    if installed is not None:
        return installed, "the installed vllm distribution"
    return None, "the current folder holds no vllm/ and no vllm distribution is installed"
