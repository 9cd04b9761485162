"""One Chromium per session (Debian's ``chromium`` driven by Playwright), one build per theme.

The browser tests skip with a reason where Playwright, Chromium or a theme is
missing, and fail instead under ``ATTN_REQUIRE_TREES=1`` (CI), as the other
real-world tests do. They run in one tox environment (``tox -e heavy``).
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import vllm_trees
from attn_browser_site import build_site

BROWSERS = ("chromium", "chromium-browser")
#: Chromium quiet and offline: pages are file:// URLs, nothing is fetched
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
)


def chromium_path() -> str | None:
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if importlib.util.find_spec("playwright") is None:
        vllm_trees.unavailable("Playwright's Python package is not installed (tox -e heavy)")
    path = chromium_path()
    if path is None:
        vllm_trees.unavailable("no Chromium (Debian package: chromium; apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as play:
        chromium = play.chromium.launch(executable_path=path, args=list(FLAGS))
        yield chromium
        chromium.close()


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
