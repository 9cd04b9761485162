#!/usr/bin/env python3
"""Regenerate the gallery's screenshots: the browser tests take them, on every theme.

    python scripts/screenshot.py [--out docs/_static/screenshots] [PYTEST ARGS...]

Runs the layout tests of ``tests/browser`` (``pytest -m browser``) with
``ATTN_SCREENSHOTS`` set: each theme's page of every vLLM 0.33.0 table is
built, measured in Chromium at 1280 px, and shot in light and, where the
theme has one, dark mode (``THEME-light.png``, ``THEME-dark.png``). Needs what
the tests need: Debian's ``chromium``, Playwright's Python package and the five
themes (``tox -e heavy`` installs them; so does ``pip install playwright
alabaster furo sphinx-rtd-theme pydata-sphinx-theme sphinx-book-theme``), and a
vLLM 0.33.0 tree (``tests/vllm_trees.py`` finds or fetches it). A screenshot is
only written by a run whose measurements pass.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "docs" / "_static" / "screenshots"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="folder for the PNGs")
    args, rest = parser.parse_known_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "ATTN_SCREENSHOTS": str(args.out.resolve()), "ATTN_REQUIRE_TREES": "1"}
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-m",
        "browser",
        "-p",
        "no:cacheprovider",
        "-q",
        str(REPO / "tests" / "browser" / "test_layout.py"),
        "-k",
        "1280",
        *rest,
    ]
    print("+", " ".join(cmd), file=sys.stderr)
    proc = subprocess.run(cmd, cwd=REPO, env=env, check=False)
    if proc.returncode == 0:
        for shot in sorted(args.out.glob("*.png")):
            print(shot.relative_to(REPO) if shot.is_relative_to(REPO) else shot)
    return proc.returncode


if __name__ == "__main__":
    raise SystemExit(main())
