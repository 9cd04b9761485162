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

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
#: The shared folder beside the repository (``../shared``), relative to the repo root.
SHARED = REPO_ROOT / ".." / "shared"
FETCH = SHARED / "vllm" / "fetch"
GOLDEN_DIR = SHARED / "vllm" / "golden"
ATTNCMP = SHARED / "tools" / "attncmp"


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
    path, reason = _locate(version)
    if path is None:
        unavailable(reason)
    assert path is not None
    return path


def shared_dir() -> Path:
    """``../shared`` (skips or fails when absent)."""
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
