#!/usr/bin/env python3
"""Compare whole-process times of our CLI and vLLM's seed generator on one tree.

    python scripts/bench.py [--version 0.33.0] [--runs 15] [--cases FILE] [--edit REL ...]
    python scripts/bench.py --sphinx [...]   (scripts/bench_sphinx.py: the selector's page)

Machines here are noisy, so the commands run interleaved in one session and
each result is a ratio of medians (ours / seed; below 1.0 means faster): the
page (markdown, runtime profile), the page as JSON, and ``select --cases``
over the release's selection cases (``../shared/vllm/select/select-VERSION.json``
unless ``--cases`` names a file; skipped when there is none), and the page
in the ``vllm-page`` profile (the seed's drop-in), each against the seed
writing its page. Each of ours runs twice per round: ``cold``
with ``--no-cache`` (everything evaluated), and ``warm`` (the default: an
unchanged tree is answered from the results the previous run kept, see
``sphinxext_attn/cli/runcache.py``; the cache lives in a scratch folder).
The seed is taken from ``../shared/seed`` at run time and placed in a scratch
folder beside a symlink to the tree's ``vllm/``; it is never part of the repo.
Our package is byte-compiled first, as a pip install leaves it (this machine
sets PYTHONDONTWRITEBYTECODE, so an editable checkout would otherwise be
recompiled on every run); the seed runs as the script it is.

``--edit REL`` (repeatable, e.g. ``vllm/v1/attention/backends/flash_attn.py``):
also time the runtime page on a copy of the tree after appending a comment to
that file before each run (the kept results of the run before: only the answers
that read the file are asked again), as ``edit NAME``.

``--replace REL OLD NEW`` (repeatable): the same after a real edit, the one
``OLD`` text of ``REL`` replaced with ``NEW`` before one run and put back before
the next (each run sees an edit), as ``replace NAME``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: commands that append a comment to a file first (by ``id`` of the command)
EDITS: dict[int, Path] = {}
#: commands that swap a text of a file for another first (by ``id`` of the command)
SWAPS: dict[int, tuple[Path, str, str]] = {}
#: commands run from another checkout (``--code``; by ``id`` of the command)
CWDS: dict[int, Path] = {}
SHARED = REPO.parent / "shared"
SELECT = SHARED / "vllm" / "select"


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


def timed(cmd: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one run of ``cmd``."""
    edited = EDITS.get(id(cmd))
    if edited is not None:
        with edited.open("a", encoding="utf-8") as fh:
            fh.write("# an edit\n")
    swap = SWAPS.get(id(cmd))
    if swap is not None:
        path, old, new = swap
        text = path.read_text(encoding="utf-8")
        if text.count(old) != 1:
            old, new = new, old  # put back
        path.write_text(text.replace(old, new), encoding="utf-8")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        cmd,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=CWDS.get(id(cmd)),
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> int:
    if "--sphinx" in sys.argv[1:]:
        from bench_sphinx import main as sphinx_main

        return sphinx_main([a for a in sys.argv[1:] if a != "--sphinx"])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="0.33.0")
    parser.add_argument("--tree", help="use this tree instead of fetching")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--cases", help="selection cases for select --cases")
    parser.add_argument("--edit", action="append", default=[], metavar="REL")
    parser.add_argument("--replace", action="append", default=[], nargs=3)
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help="time only these commands (e.g. 'vllm-page cold'; repeatable) and the seed",
    )
    parser.add_argument(
        "--code",
        action="append",
        default=[],
        metavar="DIR",
        help="also time each command with the package of another checkout DIR (the one "
        "holding sphinxext_attn/), interleaved in the same rounds: a before/after "
        "comparison under the same load (named 'NAME @DIR')",
    )
    args = parser.parse_args()
    tree = Path(args.tree) if args.tree else fetch(args.version)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(REPO / "sphinxext_attn")], check=True
    )
    scratch = Path(tempfile.mkdtemp(prefix="attn-bench-"))
    try:
        seed = seed_script(scratch, tree)
        ours = [sys.executable, "-m", "sphinxext_attn", "--root", str(tree)]
        cases = Path(args.cases) if args.cases else SELECT / f"select-{args.version}.json"
        commands = {
            "seed": [sys.executable, str(seed), "-o", str(scratch / "seed.md")],
            "page": [*ours, "-o", str(scratch / "ours.md")],
            "json": [*ours, "--format", "json", "-o", str(scratch / "ours.json")],
            "vllm-page": [*ours, "--profile", "vllm-page", "-o", str(scratch / "page.md")],
        }
        if cases.is_file():
            commands["select"] = [
                sys.executable,
                "-m",
                "sphinxext_attn",
                "select",
                "--root",
                str(tree),
                "--cases",
                str(cases),
                "-o",
                str(scratch / "select.json"),
            ]
        for name in [n for n in commands if n != "seed"]:
            commands[f"{name} cold"] = [*commands[name], "--no-cache"]
            commands[f"{name} warm"] = commands.pop(name)
        if args.edit or args.replace:
            copy = scratch / "edited"
            shutil.copytree(tree, copy, symlinks=True)
            for i, (rel, old, new) in enumerate(args.replace):
                cmd = [*ours[:-1], str(copy), "-o", str(scratch / "edited.md")]
                commands[f"replace {i} {Path(rel).stem}"] = cmd
                SWAPS[id(cmd)] = (copy / rel, old, new)
            for rel in args.edit:
                cmd = [*ours[:-1], str(copy), "-o", str(scratch / "edited.md")]
                commands[f"edit {Path(rel).stem}"] = cmd
                EDITS[id(cmd)] = copy / rel
        if args.only:
            wanted = {"seed", *args.only}
            commands = {
                n: c
                for n, c in commands.items()
                if n in wanted or n.startswith("edit ") or n.startswith("replace ")
            }
        base = dict(commands)
        for code in [Path(c).resolve() for c in args.code]:
            subprocess.run(
                [sys.executable, "-m", "compileall", "-q", str(code / "sphinxext_attn")],
                check=True,
            )
            for name, cmd in base.items():
                if name == "seed":
                    continue
                other = list(cmd)
                commands[f"{name} @{code.name}"] = other
                CWDS[id(other)] = code
                if id(cmd) in EDITS:
                    EDITS[id(other)] = EDITS[id(cmd)]
                if id(cmd) in SWAPS:
                    SWAPS[id(other)] = SWAPS[id(cmd)]
        os.environ["SPHINXEXT_ATTN_CACHE_DIR"] = str(scratch / "cache")
        for cmd in commands.values():
            timed(cmd)  # warm the page cache (and fill ours)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, cmd in commands.items():
                times[name].append(timed(cmd))
        seed_wall = statistics.median(t[0] for t in times["seed"])
        seed_cpu = statistics.median(t[1] for t in times["seed"])
        print(f"tree: {tree}")
        print(f"runs: {args.runs} each, interleaved; ratio = ours / seed (wall, and CPU)")
        for name, spent in times.items():
            wall = statistics.median(t[0] for t in spent)
            cpu = statistics.median(t[1] for t in spent)
            fastest = min(t[0] for t in spent)
            line = f"{name:22} median {wall * 1000:7.1f} ms  (min {fastest * 1000:.1f})"
            line += f"  cpu {cpu * 1000:7.1f} ms"
            if name != "seed":
                line += f"  ratio {wall / seed_wall:.2f}  cpu ratio {cpu / seed_cpu:.2f}"
            print(line)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
