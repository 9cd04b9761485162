#!/usr/bin/env python3
"""Compare whole-process times of our CLI and vLLM's seed generator on one tree.

    python scripts/bench.py [--version 0.33.0] [--runs 15]

Machines here are noisy, so the two commands run interleaved in one session
and the result is a ratio of medians (ours / seed; below 1.0 means faster).
The seed is taken from ``../shared/seed`` at run time and placed in a scratch
folder beside a symlink to the tree's ``vllm/``; it is never part of the repo.
Our package is byte-compiled first, as a pip install leaves it (this machine
sets PYTHONDONTWRITEBYTECODE, so an editable checkout would otherwise be
recompiled on every run); the seed runs as the script it is.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


def fetch(version: str) -> Path:
    out = subprocess.run(
        [sys.executable, str(SHARED / "vllm" / "fetch"), version],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return Path(out.strip().splitlines()[-1])


def seed_script(scratch: Path, tree: Path) -> Path:
    """Lay the seed out where it expects to live (tools/pre_commit/) beside the tree."""
    seed_text = next((SHARED / "seed").glob("*.txt")).read_text(encoding="utf-8")
    body = seed_text.split("\n", 2)[2]  # first line names the file, second is blank
    target = scratch / "tools" / "pre_commit" / "generate_attention_backend_docs.py"
    target.parent.mkdir(parents=True)
    target.write_text(body, encoding="utf-8")
    (scratch / "vllm").symlink_to(tree / "vllm", target_is_directory=True)
    return target


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="0.33.0")
    parser.add_argument("--tree", help="use this tree instead of fetching")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    tree = Path(args.tree) if args.tree else fetch(args.version)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(REPO / "sphinxext_attn")], check=True
    )
    scratch = Path(tempfile.mkdtemp(prefix="attn-bench-"))
    try:
        seed = seed_script(scratch, tree)
        ours_cmd = [
            sys.executable,
            "-m",
            "sphinxext_attn",
            "--root",
            str(tree),
            "-o",
            str(scratch / "ours.md"),
        ]
        seed_cmd = [sys.executable, str(seed), "-o", str(scratch / "seed.md")]
        timed(ours_cmd), timed(seed_cmd)  # warm the page cache for both
        ours: list[float] = []
        theirs: list[float] = []
        for _ in range(args.runs):
            ours.append(timed(ours_cmd))
            theirs.append(timed(seed_cmd))
        o, s = statistics.median(ours), statistics.median(theirs)
        print(f"tree: {tree}")
        print(f"runs: {args.runs} each, interleaved")
        print(f"ours  median {o * 1000:7.1f} ms  (min {min(ours) * 1000:.1f})")
        print(f"seed  median {s * 1000:7.1f} ms  (min {min(theirs) * 1000:.1f})")
        print(f"ratio ours/seed: {o / s:.2f}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
