"""Locate fetched vLLM release trees and the shared goldens for tests.

One place for the rule every real-tree test follows: find the tree through
``$VLLM_TREES`` / the default cache / ``../shared/vllm/fetch`` (run as a
subprocess, never imported), skip with a clear reason when none can be had,
and fail instead of skipping when ``ATTN_REQUIRE_TREES=1`` is set (CI).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sphinxext_attn.model.records import Analysis

REPO_ROOT = Path(__file__).resolve().parent.parent
#: The shared folder beside the repository (``../shared``), relative to the repo root.
SHARED = REPO_ROOT / ".." / "shared"
FETCH = SHARED / "vllm" / "fetch"
GOLDEN_DIR = SHARED / "vllm" / "golden"
ATTNCMP = SHARED / "tools" / "attncmp"
#: Compares two pages byte for byte, a markdown link read as its text (as the goldens hold one).
PAGESAME = SHARED / "tools" / "pagesame"


#: Whether the running test carries the ``realtree`` marker (conftest.py sets it per test;
#: outside pytest anything may ask for a tree).
MARKED = {"realtree": True}


def _check_marked(what: str) -> None:
    if not MARKED["realtree"]:
        pytest.fail(
            f"{what}: a test that needs a vLLM release tree or ../shared carries the "
            "`realtree` marker (so that `pytest -m 'not realtree'` runs offline)"
        )


def require_trees() -> bool:
    return os.environ.get("ATTN_REQUIRE_TREES", "") not in ("", "0")


def unavailable(reason: str) -> None:
    """Skip the calling test, or fail it when trees are required."""
    if require_trees():
        pytest.fail(f"{reason} (ATTN_REQUIRE_TREES=1, so this is a failure)")
    pytest.skip(reason)


def _is_tree(path: Path) -> bool:
    return (path / "vllm" / "__init__.py").is_file()


def _candidates(version: str) -> list[Path]:
    dirs = []
    if os.environ.get("VLLM_TREES"):
        dirs.append(Path(os.environ["VLLM_TREES"]))
    dirs.append(Path.home() / ".cache" / "vllm-trees")
    return [d / f"vllm-{version}" for d in dirs]


@functools.cache
def _locate(version: str) -> tuple[Path | None, str]:
    for cand in _candidates(version):
        if _is_tree(cand):
            return cand, ""
    if not FETCH.is_file():
        return None, f"vLLM {version} tree not in $VLLM_TREES or the cache, and no {FETCH}"
    try:
        proc = subprocess.run(
            [sys.executable, str(FETCH), version],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"fetching vLLM {version} failed: {exc}"
    lines = proc.stdout.strip().splitlines()
    if proc.returncode == 0 and lines and _is_tree(Path(lines[-1])):
        return Path(lines[-1]), ""
    last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return None, f"no vLLM {version} tree: `{FETCH} {version}` failed: {last[:300]}"


def tree(version: str) -> Path:
    """The root of the vLLM ``version`` source tree (skips or fails when unavailable)."""
    _check_marked(f"vLLM {version}")
    path, reason = _locate(version)
    if path is None:
        unavailable(reason)
    assert path is not None
    return path


def shared_dir() -> Path:
    """``../shared`` (skips or fails when absent)."""
    _check_marked(str(SHARED))
    if not SHARED.is_dir():
        unavailable(f"{SHARED} not present (the shared goldens and tools live there)")
    return SHARED


def goldens() -> list[tuple[str, Path]]:
    """(version, golden page) for every golden in ``../shared/vllm/golden`` (may be empty)."""
    if not GOLDEN_DIR.is_dir():
        return []
    out = []
    for path in sorted(GOLDEN_DIR.glob("attention_backends-*.md")):
        out.append((path.stem.removeprefix("attention_backends-"), path))
    return out


#: Releases the CI fetches (.ci/run): every one from 0.16 to 0.33 must analyse cleanly.
RELEASES = tuple(f"0.{minor}.0" for minor in range(16, 34))
#: Releases with no golden in ../shared whose source archive ships the page vLLM's
#: generator committed (docs/design/attention_backends.md, tables included, up to
#: 0.26; later releases fill the tables in at docs build time).
IN_TREE_PAGES = ("0.17.0", "0.19.0", "0.21.0", "0.22.0", "0.24.0", "0.26.0")


@functools.cache
def analysis(version: str, profile: str = "vllm-page") -> Analysis:
    """``analyze()`` of a release, once per test session (callers must not change it)."""
    from sphinxext_attn.analysis.pipeline import analyze

    return analyze(tree(version), profile=profile)


def plugin_tree(name: str, version: str) -> Path:
    """An unpacked plugin wheel (``tpu-inference-0.32.0``: the folder holding
    ``tpu_inference/``), from ``$VLLM_TREES`` or the cache; fetched with
    ``pip download --no-deps`` and unpacked there when missing."""
    _check_marked(f"{name} {version}")
    folder_name = f"{name}-{version}"
    for base in [Path(p) for p in [os.environ.get("VLLM_TREES", "")] if p] + [
        Path.home() / ".cache" / "vllm-trees"
    ]:
        if (base / folder_name).is_dir():
            return base / folder_name
    target = Path.home() / ".cache" / "vllm-trees" / folder_name
    import tempfile
    import zipfile

    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp,
             f"{name}=={version}"],
            capture_output=True,
            text=True,
            check=False,
        )  # fmt: skip
        wheels = list(Path(tmp).glob("*.whl"))
        if proc.returncode != 0 or not wheels:
            unavailable(f"{name} {version}: pip download failed: {proc.stderr.strip()[-200:]}")
        with zipfile.ZipFile(wheels[0]) as wheel:
            wheel.extractall(target)
    return target
