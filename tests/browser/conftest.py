"""One build per theme (the session's one Chromium, ``browser``, is in tests/conftest.py).

The browser tests skip with a reason where Playwright, Chromium or a theme is
missing, and fail instead under ``ATTN_REQUIRE_TREES=1`` (CI), as the other
real-world tests do. They run in one tox environment (``tox -e heavy``).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest
import vllm_trees
from attn_browser_site import build_site


@pytest.fixture(scope="session")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """theme -> its built HTML folder, each built on first use."""
    tree = vllm_trees.tree("0.33.0")
    built: dict[str, Path] = {}

    class Sites(dict[str, Path]):
        def __missing__(self, theme: str) -> Path:
            module = "sphinx_rtd_theme" if theme == "sphinx_rtd_theme" else theme
            if importlib.util.find_spec(module) is None:
                vllm_trees.unavailable(f"the {theme} theme is not installed (tox -e heavy)")
            folder = tmp_path_factory.mktemp(theme)
            self[theme] = build_site(theme, tree, folder)
            return self[theme]

    yield Sites(built)
