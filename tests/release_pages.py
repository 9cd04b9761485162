"""The command line's vllm-page markdown of real releases, made once per test session.

Apart from :mod:`vllm_trees` because it runs the command line, whose module reaches
docutils (the platform section): a test module that imports this one runs on the
dependency floors too (the ``deps`` marker, tests/dependency_use.py), while the
many that only need a tree or an analysis do not.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import vllm_trees


@functools.cache
def _page(version: str) -> str:
    from sphinxext_attn.cli.main import main

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"attention_backends-{version}.md"
        root = str(vllm_trees.tree(version))
        assert main(["--root", root, "--profile", "vllm-page", "-o", str(out)]) == 0
        return out.read_text(encoding="utf-8")


def page(version: str) -> str:
    """The command line's vllm-page markdown for a release, made once per test session."""
    vllm_trees.tree(version)  # skips or fails outside the cache, so the failure is not cached
    return _page(version)
