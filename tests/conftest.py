"""Shared pytest setup: Sphinx test roots live in tests/roots/test-*/."""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dependency_use
import heap_policy
import pytest
import vllm_trees
from skips import allowed_skip

# The command line keeps results between runs (sphinxext_attn/cli/runcache.py). Tests
# run it with the cache off, subprocesses included, so that each one evaluates
# what it asks (a monkeypatched rule must not be answered from an earlier run);
# tests/cli/test_runcache.py turns it on with --cache-dir.
os.environ["SPHINXEXT_ATTN_CACHE_DIR"] = ""

collect_ignore = ["roots", "trees"]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``deps`` the tests that run Sphinx, docutils or myst-parser code
    (tests/dependency_use.py): ``tox -e oldest`` and ``-e newest`` run those."""
    for item in items:
        path = Path(str(item.fspath))
        fixtures = set(getattr(item, "fixturenames", ()))
        if dependency_use.uses_dependencies(path) or fixtures & dependency_use.SPHINX_FIXTURES:
            item.add_marker(pytest.mark.deps)
        if item.get_closest_marker("realtree") is not None:
            # a release tree not in the cache is fetched (../shared/vllm/fetch: PyPI)
            item.add_marker(pytest.mark.network)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Under ATTN_REQUIRE_TREES=1 a skip not on skips.ALLOWED_SKIPS is a failure."""
    report = yield
    if report.skipped and not hasattr(report, "wasxfail") and vllm_trees.require_trees():
        reason = str(report.longrepr[2] if isinstance(report.longrepr, tuple) else "")
        if not allowed_skip(report.nodeid, reason):
            report.outcome = "failed"
            report.longrepr = (
                f"skipped under ATTN_REQUIRE_TREES=1, not in tests/skips.py: {reason}"
            )
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test may ask vllm_trees for a release tree only if it is marked ``realtree``."""
    vllm_trees.MARKED["realtree"] = item.get_closest_marker("realtree") is not None


def pytest_sessionstart(session: pytest.Session) -> None:
    heap_policy.start()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """After a module's last test and its fixtures: the long-lived heap is frozen
    (tests/heap_policy.py), so the collector stops rescanning it."""
    result = yield
    if heap_policy.module_ends(item, nextitem):
        heap_policy.settle()
    return result


@pytest.fixture(scope="session")
def rootdir() -> Path:
    return Path(__file__).parent / "roots"


class VariantTables(dict[tuple[str, str], dict[str, Any]]):
    """(platform, arch) -> that selector table of vLLM 0.33.0 (``build_variant`` in the
    reference environment), each built on first use, over one parsed tree."""

    def __init__(self, tree: Any) -> None:
        super().__init__()
        self.tree = tree

    def __missing__(self, variant: tuple[str, str]) -> dict[str, Any]:
        from sphinxext_attn.model.environment import Environment
        from sphinxext_attn.selector.variants import build_variant

        self[variant] = build_variant(self.tree, Environment(), variant)
        return self[variant]


@pytest.fixture(scope="session")
def source_tree_033() -> Any:
    """vLLM 0.33.0 parsed once per session (a ``SourceTree``; callers must not change it)."""
    from sphinxext_attn.source.tree import SourceTree

    return SourceTree(str(vllm_trees.tree("0.33.0")))


@pytest.fixture(scope="session")
def selector_tables_033(source_tree_033: Any) -> VariantTables:
    """The selector tables of vLLM 0.33.0, shared by the modules that read them (a
    table is some seconds of evaluation; building it once per session keeps the
    version matrix fast). Tests only read them."""
    return VariantTables(source_tree_033)


#: Chromium quiet and offline: pages are file:// URLs, nothing is fetched
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium per session (Debian's ``chromium``, driven by Playwright: no
    browser download), for every browser test (tests/browser, tests/selector)."""
    if importlib.util.find_spec("playwright") is None:
        vllm_trees.unavailable("Playwright's Python package is not installed (tox -e heavy)")
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        vllm_trees.unavailable("no Chromium (Debian package: chromium; apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as play:
        chromium = play.chromium.launch(executable_path=path, args=list(CHROMIUM_FLAGS))
        yield chromium
        chromium.close()


@pytest.fixture(autouse=True)
def _docutils_registries():
    """Each test starts with the directives and roles it found.

    Sphinx 7.2's test app restores the registries by handing back the very
    dict a later app then registers into, so with two apps in one test the
    next test would meet "directive ... is already registered" warnings.
    """
    from docutils.parsers.rst import directives, roles

    saved = (dict(directives._directives), dict(roles._roles))
    yield
    directives._directives = dict(saved[0])
    roles._roles = dict(saved[1])
