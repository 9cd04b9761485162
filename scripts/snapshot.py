#!/usr/bin/env python3
"""Write every output of the command line (and the selector's data) for a set of releases.

    python scripts/snapshot.py OUTDIR [VERSION ...]

For checking that a change which should not change behaviour (a refactor, a
move) does not: run it before and after, then ``diff -r`` the two folders.
Per release: the runtime and vllm-page pages, the JSON, ``select --cases``
on every recorded case file, and the selector's table. Cache off throughout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
DEFAULT = ["0.13.0", "0.14.1"] + [f"0.{minor}.0" for minor in range(16, 35)]
SELECTOR = """
import json, sys
from sphinxext_attn.selector.table import build_selector_table
print(json.dumps(build_selector_table(sys.argv[1]).table, sort_keys=True))
"""


def tree_of(version: str) -> str:
    out = subprocess.run(
        [str(SHARED / "vllm" / "fetch"), version], capture_output=True, text=True, check=True
    )
    return out.stdout.strip().splitlines()[-1]


def jobs(out: Path, version: str) -> list[tuple[Path, list[str]]]:
    tree = tree_of(version)
    cli = [sys.executable, "-m", "sphinxext_attn"]
    base = ["--root", tree, "--no-cache", "-o", "-"]
    todo = [
        (out / f"{version}.runtime.md", [*cli, *base]),
        (out / f"{version}.vllm-page.md", [*cli, *base, "--profile", "vllm-page"]),
        (out / f"{version}.json", [*cli, *base, "--format", "json"]),
        (out / f"{version}.selector.json", [sys.executable, "-c", SELECTOR, tree]),
    ]
    for cases in sorted((SHARED / "vllm" / "select").glob("*.json")):
        todo.append(
            (
                out / f"{version}.select-{cases.stem}.json",
                [*cli, "select", "--root", tree, "--no-cache", "--cases", str(cases)],
            )
        )
    return todo


def run(item: tuple[Path, list[str]]) -> str:
    path, cmd = item
    proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ))
    path.write_text(proc.stdout)
    path.with_suffix(path.suffix + ".err").write_text(f"exit {proc.returncode}\n{proc.stderr}")
    return path.name


def main() -> int:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    versions = sys.argv[2:] or DEFAULT
    todo = [job for v in versions for job in jobs(out, v)]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for name in pool.map(run, todo):
            print(name, flush=True)
    json.dumps(None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
