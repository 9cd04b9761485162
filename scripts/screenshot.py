#!/usr/bin/env python3
"""Screenshot the docs' gallery page in headless Chromium, to check the tables by eye.

    python scripts/screenshot.py [--build] [--page gallery.html] [--size 1400x3000 ...]

Uses the HTML in docs/_build/html (``--build`` runs sphinx-build first with
this Python) and Debian's chromium (``/usr/bin/chromium``; when it is missing
and we are root, ``apt-get install -y chromium`` is tried unless
``--no-install``). Pages are opened as ``file://`` URLs, so no server runs and
nothing is fetched from the network. PNGs go to docs/_build/screenshots/.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HTML = REPO / "docs" / "_build" / "html"
OUT = REPO / "docs" / "_build" / "screenshots"
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def find_chromium(install: bool) -> str:
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    if install and os.geteuid() == 0 and shutil.which("apt-get"):
        print("chromium not found; trying apt-get install -y chromium", file=sys.stderr)
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=False, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=False, env=env)
        for name in CANDIDATES:
            found = shutil.which(name)
            if found:
                return found
    raise SystemExit("screenshot: no chromium found (apt-get install chromium)")


def build_docs() -> None:
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "docs", str(HTML)]
    print("+", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, cwd=REPO)


def screenshot(chromium: str, page: Path, out: Path, size: str) -> Path:
    width, height = size.lower().split("x")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="attn-chromium-") as profile:
        cmd = [
            chromium,
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--window-size={int(width)},{int(height)}",
            f"--screenshot={out}",
            page.resolve().as_uri(),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    if proc.returncode != 0 or not out.is_file():
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"screenshot: chromium failed ({proc.returncode}) for {page}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", action="store_true", help="run sphinx-build first")
    parser.add_argument("--html", type=Path, default=HTML, help="built HTML folder")
    parser.add_argument(
        "--page", action="append", help="page(s) to shoot, relative to --html (default: gallery)"
    )
    parser.add_argument(
        "--size",
        action="append",
        help="window size WxH, repeatable (default: 1400x3000 and a narrow 800x3000)",
    )
    parser.add_argument("--out", type=Path, default=OUT, help="folder for the PNGs")
    parser.add_argument("--no-install", action="store_true", help="never apt-get chromium")
    args = parser.parse_args(argv)

    if args.build:
        build_docs()
    pages = args.page or ["gallery.html"]
    sizes = args.size or ["1400x3000", "800x3000"]
    chromium = find_chromium(install=not args.no_install)
    for name in pages:
        page = args.html / name
        if not page.is_file():
            raise SystemExit(f"screenshot: {page} not found (build the docs, or pass --build)")
        for size in sizes:
            out = args.out / f"{Path(name).stem}-{size}.png"
            print(screenshot(chromium, page, out, size))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
