#!/usr/bin/env python3
"""Compare a one-page Sphinx build with the selector and the same page with the table.

    python scripts/bench_sphinx.py [--version 0.33.0] [--runs 7] [--platforms cuda,rocm,cpu]
                                   [--code DIR ...]
    python scripts/bench.py --sphinx ...   (the same)

Two one-page projects are built, interleaved in one session, each time with a
fresh output and doctree folder (``-E``, nothing kept from the build before):
``.. attention-backends-selector::`` (with ``:platforms:`` when given) and
``.. attention-backends::``, both on the same tree. Each build is a whole
``sphinx-build`` process; CPU is user + system of the process and its children
(the runtime profile forks). Printed: the medians of each and the ratio of
medians (selector / table; the issue's target is at most 1.5).

``--code DIR`` runs the package found in ``DIR`` (a checkout holding
``sphinxext_attn/``, byte-compiled first) instead of this one; given more than
once, every version's pair of builds is interleaved in the same rounds, so a
before/after comparison sees the same load (``--code /tmp/before --code .``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import REPO, fetch, timed  # noqa: E402

CONF = """\
extensions = ["sphinxext_attn"]
attention_backends_root = {root!r}
html_theme = "basic"
"""

PAGE = """\
Backends
========

.. {directive}::
{options}
"""


def project(where: Path, root: Path, directive: str, options: str) -> Path:
    """A one-page Sphinx project with one directive of ours on ``root``."""
    where.mkdir(parents=True)
    (where / "conf.py").write_text(CONF.format(root=str(root)), encoding="utf-8")
    (where / "index.rst").write_text(
        PAGE.format(directive=directive, options=options), encoding="utf-8"
    )
    return where


def build_command(source: Path, out: Path) -> list[str]:
    """A whole fresh build: ``-E`` reads everything, the output folder is emptied first."""
    return [sys.executable, "-m", "sphinx", "-b", "html", "-E", "-q", str(source), str(out)]


def fresh_timed(cmd: list[str], out: Path, env: dict[str, str]) -> tuple[float, float]:
    shutil.rmtree(out, ignore_errors=True)
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        return timed(cmd)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="0.33.0")
    parser.add_argument("--tree", help="use this tree instead of fetching")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--platforms", default="", help="the selector's :platforms: option")
    parser.add_argument(
        "--code", action="append", default=[], help="a checkout whose sphinxext_attn/ is run"
    )
    args = parser.parse_args(argv)
    tree = Path(args.tree) if args.tree else fetch(args.version)
    codes = [Path(c).resolve() for c in args.code] or [REPO]
    for code in codes:
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(code / "sphinxext_attn")], check=True
        )
    scratch = Path(tempfile.mkdtemp(prefix="attn-bench-sphinx-"))
    # ``python -m`` puts the working folder first on sys.path: from the repo the
    # repo's package would be imported whatever ``--code`` says
    os.chdir(scratch)
    try:
        selector_options = f"   :platforms: {args.platforms}\n" if args.platforms else ""
        sources = {
            "table": project(scratch / "table", tree, "attention-backends", ""),
            "selector": project(
                scratch / "selector", tree, "attention-backends-selector", selector_options
            ),
        }
        runs: dict[tuple[int, str], tuple[list[str], Path, dict[str, str]]] = {}
        for number, code in enumerate(codes):
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(code), env.get("PYTHONPATH")]))
            for name, source in sources.items():
                out = scratch / f"out-{number}-{name}"
                runs[number, name] = (build_command(source, out), out, env)
        for cmd, out, env in runs.values():
            fresh_timed(cmd, out, env)  # warm the page cache; checks the build works
        times: dict[tuple[int, str], list[tuple[float, float]]] = {key: [] for key in runs}
        for _ in range(args.runs):
            for key, (cmd, out, env) in runs.items():
                times[key].append(fresh_timed(cmd, out, env))
        print(f"tree: {tree}  load: {os.getloadavg()[0]:.1f} (after)")
        selector = "selector" + (f" ({args.platforms})" if args.platforms else "")
        print(f"runs: {args.runs} each, interleaved; ratio = {selector} / table")
        for number, code in enumerate(codes):
            print(f"code: {code}")
            medians = {}
            for name in sources:
                spent = times[number, name]
                wall = statistics.median(t[0] for t in spent)
                cpu = statistics.median(t[1] for t in spent)
                medians[name] = (wall, cpu)
                fastest = min(t[0] for t in spent)
                print(f"  {name:9} median {wall:6.2f} s (min {fastest:.2f})  cpu {cpu:6.2f} s")
            wall_ratio = medians["selector"][0] / medians["table"][0]
            cpu_ratio = medians["selector"][1] / medians["table"][1]
            print(f"  ratio     wall {wall_ratio:.2f}  cpu {cpu_ratio:.2f}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
