"""Which files of a root are vLLM's: the analysed package, and whether the root is
an installed layout (a ``site-packages``) or a checkout."""

from __future__ import annotations

import os
from pathlib import Path

#: The analysed package. Other top-level packages beside it (torch, flashinfer, ...
#: in a ``site-packages``) are outside the tree: imports of them are external, as
#: when they are not installed at all.
PACKAGE = "vllm"


def in_package(dotted: str) -> bool:
    """Whether the dotted module name lies in the analysed package."""
    return dotted == PACKAGE or dotted.startswith(PACKAGE + ".")


def is_installed_layout(root: Path) -> bool:
    """Whether ``root`` is a ``site-packages`` (vLLM installed as a distribution):
    then nothing beside ``vllm/`` is vLLM's (a ``tools/`` or ``docs/`` there is
    another distribution's), unlike in a checkout, whose ``tools/`` and ``docs/``
    hold vLLM's generator and page."""
    try:
        with os.scandir(root) as entries:
            return any(
                e.name.startswith(f"{PACKAGE}-") and e.name.endswith(".dist-info") for e in entries
            )
    except OSError:
        return False
