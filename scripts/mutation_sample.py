#!/usr/bin/env python3
"""A sampled mutation-testing pass over the evaluator and the selection code (local only).

    scripts/mutation_sample.py WORKDIR [--pyeval 25] [--selection 18] [--selector 0]
                               [--runtime 0] [--cli 0] [--seed 26]

Cosmic Ray mutates files in place, so this clones the committed HEAD into
WORKDIR/repo, makes WORKDIR/venv with the package (editable, from the clone), its
test extras and ``cosmic-ray``, and lists every mutant of each package asked for
(``sphinxext_attn/pyeval``, ``selection``, ``selector``, ``runtime``, ``cli``). A
full pass is thousands of mutants times a test run each, far too long for a shared
machine, so a random sample of each (by place in the code, with a seed: the same
code gives the same sample) is run, one mutant at a time, against the tests of
that subsystem (``pytest -x``). It prints the score (killed / run) and the diff of
every mutant that survived; not in CI.

The clone follows the committed HEAD on every run (a rerun after a commit tests the
new code). ``WORKDIR/shared`` links to the checkout's ``../shared``, so the clone's
real-tree tests run as in CI (without it they skip: 41 of the runtime command's).
``--confirm`` then runs each survivor against the whole default suite
(the tox version matrix's selection, ``pytest -x``) in the clone as it stands, for
the score of the suite rather than of the subsystem's tests; it reads the results
a run left and mutates nothing else. ``--recheck`` runs each survivor against its
subsystem's own command again (after a change to what the clone's tests find).

Mutants that cannot change behaviour are left out before sampling and
counted apart: those inside an annotation (``from __future__ import annotations``
makes every annotation a string nobody evaluates) and those inside an
``if TYPE_CHECKING:`` block (never run).
"""

from __future__ import annotations

import argparse
import ast
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PYTEST = "python -m pytest -x -q -p no:cacheprovider"
FAST = "-m 'not slow and not browser'"
PINNED = "tests/test_pinned_behaviours.py"
SUITES = {
    "pyeval": (
        "sphinxext_attn/pyeval",
        f"{FAST} tests/pyeval {PINNED} tests/runtime/test_demo_tree.py"
        " tests/source/test_chunks.py",
    ),
    "selection": (
        "sphinxext_attn/selection",
        f"{FAST} tests/selection tests/runtime/test_demo_tree.py {PINNED} tests/models"
        " tests/analysis/test_plugin_faults.py tests/cli/test_unhonoured_input.py",
    ),
    "selector": (
        "sphinxext_attn/selector",
        f"{FAST} tests/selector",
    ),
    "runtime": (
        "sphinxext_attn/runtime",
        f"{FAST} tests/runtime tests/analysis {PINNED} tests/page"
        " tests/selection/test_tpu_plugin.py tests/selection/test_plugin_fixtures.py",
    ),
    "cli": (
        "sphinxext_attn/cli",
        f"{FAST} tests/cli {PINNED} tests/models/test_model_cli.py"
        " tests/analysis/test_plugin_faults.py",
    ),
}


def run(*args: str, cwd: Path | None = None) -> None:
    subprocess.run(args, cwd=cwd, check=True)


def inert_lines(path: Path) -> list[tuple[int, int, int, int]]:
    """The spans (row, col, end row, end col) of a module that no run evaluates:
    annotations and the bodies of ``if TYPE_CHECKING:``."""
    spans = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        parts: list[ast.AST | None] = []
        if isinstance(node, ast.arg | ast.AnnAssign):
            parts.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            parts.append(node.returns)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            parts.extend(node.body)
        for part in parts:
            if part is not None:
                end = (part.end_lineno or part.lineno, part.end_col_offset or 0)
                spans.append((part.lineno, part.col_offset, *end))
    return spans


def inert(spec: tuple, spans: dict[str, list[tuple[int, int, int, int]]], repo: Path) -> bool:
    """Whether a mutant lies wholly inside a span no run evaluates."""
    module, row, col, end_row, end_col = spec[1], spec[2], spec[3], spec[6], spec[7]
    if module not in spans:
        spans[module] = inert_lines(repo / module)
    return any(
        (r, c) <= (row, col) and (end_row, end_col) <= (er, ec) for r, c, er, ec in spans[module]
    )


def sample(db: Path, count: int, seed: int, repo: Path) -> tuple[int, int]:
    """Keep ``count`` mutants of the session, chosen by place among those that can
    change behaviour; return how many there were and how many were inert."""
    con = sqlite3.connect(db)
    specs = con.execute(
        "select job_id, module_path, start_pos_row, start_pos_col, operator_name, occurrence,"
        " end_pos_row, end_pos_col from mutation_specs"
    ).fetchall()
    specs.sort(key=lambda spec: spec[1:])
    spans: dict[str, list[tuple[int, int, int, int]]] = {}
    live = [spec for spec in specs if not inert(spec, spans, repo)]
    keep = {spec[0] for spec in random.Random(seed).sample(live, min(count, len(live)))}
    drop = [(spec[0],) for spec in specs if spec[0] not in keep]
    con.executemany("delete from mutation_specs where job_id=?", drop)
    con.executemany("delete from work_items where job_id=?", drop)
    con.commit()
    return len(live), len(specs) - len(live)


def report(db: Path) -> tuple[int, int]:
    """Print the survivors' diffs; (killed, run). A timeout counts as killed."""
    con = sqlite3.connect(db)
    rows = con.execute("select worker_outcome, test_outcome, diff from work_results").fetchall()
    survivors = [diff for worker, test, diff in rows if worker == "NORMAL" and test == "SURVIVED"]
    for diff in survivors:
        print(diff)
    ran = [row for row in rows if row[0] in ("NORMAL", "TIMEOUT")]
    return len(ran) - len(survivors), len(ran)


WHOLE_SUITE = "-m 'not (browser or slow or pdf or tools)' tests"


def confirm(db: Path, repo: Path, python: Path, tests: str = WHOLE_SUITE) -> tuple[int, int]:
    """Each survivor of ``db`` applied to the clone and run against ``tests`` (by
    default the whole default suite), then taken back; (killed, survivors)."""
    con = sqlite3.connect(db)
    rows = con.execute("select worker_outcome, test_outcome, diff from work_results").fetchall()
    survivors = [diff for worker, test, diff in rows if worker == "NORMAL" and test == "SURVIVED"]
    killed = 0
    for diff in survivors:
        patch = diff if diff.endswith("\n") else diff + "\n"  # (stored without the last)
        # (a diff of a module's last lines may claim an empty line past its end:
        # then it applies with one line of context)
        for context in ([], ["-C1"]):
            applied = subprocess.run(
                ["git", "apply", "-p1", *context, "-"], input=patch, text=True, cwd=repo
            )
            if applied.returncode == 0:
                break
        else:
            raise SystemExit(f"cannot apply:\n{diff}")
        try:
            command = f"{PYTEST.replace('python', str(python), 1)} {tests}"
            outcome = subprocess.run(command, shell=True, cwd=repo, capture_output=True)
        finally:
            subprocess.run(["git", "checkout", "-q", "--", "."], cwd=repo, check=True)
        caught = outcome.returncode != 0
        killed += caught
        print(f"{'killed' if caught else 'SURVIVED'} by {tests}:\n{diff}")
    return killed, len(survivors)


def link_shared(work: Path) -> None:
    """``WORKDIR/shared`` -> the checkout's ``../shared`` (the release trees' fetch,
    the truth files, the goldens and the scorers): the clone's tests then find them
    as the checkout's and CI's do, instead of skipping every real-tree test."""
    shared, link = REPO.parent / "shared", work / "shared"
    if shared.is_dir() and not link.exists():
        work.mkdir(parents=True, exist_ok=True)
        link.symlink_to(shared, target_is_directory=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workdir", type=Path)
    defaults = {"pyeval": 25, "selection": 18}
    for name in SUITES:
        parser.add_argument(f"--{name}", type=int, default=defaults.get(name, 0))
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--confirm", action="store_true", help="survivors vs the whole suite")
    parser.add_argument(
        "--recheck", action="store_true", help="survivors vs their package's command again"
    )
    args = parser.parse_args()
    work = args.workdir.resolve()
    repo, venv = work / "repo", work / "venv"
    link_shared(work)
    if args.confirm or args.recheck:
        for name, (_, tests) in SUITES.items():
            db = work / f"{name}.sqlite"
            if db.exists():
                suite = tests if args.recheck else WHOLE_SUITE
                killed, alive = confirm(db, repo, venv / "bin" / "python", suite)
                print(f"{name}: {killed}/{alive} survivors killed by {suite}")
        return 0
    if not repo.exists():
        run("git", "clone", "-q", str(REPO), str(repo))
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout.strip()
    run("git", "fetch", "-q", str(REPO), head, cwd=repo)
    run("git", "checkout", "-q", "--force", "--detach", head, cwd=repo)
    if not venv.exists():
        run(sys.executable, "-m", "venv", str(venv))
        run(str(venv / "bin" / "pip"), "install", "-q", "-e", f"{repo}[test]", "cosmic-ray")
    python = venv / "bin" / "python"
    for name, (package, tests) in SUITES.items():
        count = getattr(args, name)
        if not count:
            continue
        config, db = work / f"{name}.toml", work / f"{name}.sqlite"
        config.write_text(
            "[cosmic-ray]\n"
            f'module-path = "{package}"\ntimeout = 240.0\nexcluded-modules = []\n'
            f'test-command = "{PYTEST.replace("python", str(python), 1)} {tests}"\n\n'
            '[cosmic-ray.distributor]\nname = "local"\n',
            encoding="utf-8",
        )
        db.unlink(missing_ok=True)
        run(str(venv / "bin" / "cosmic-ray"), "init", str(config), str(db), cwd=repo)
        total, skipped = sample(db, count, args.seed, repo)
        run(str(venv / "bin" / "cosmic-ray"), "exec", str(config), str(db), cwd=repo)
        killed, ran = report(db)
        print(
            f"{name}: {killed}/{ran} killed ({100.0 * killed / max(ran, 1):.0f}%), "
            f"sample of {ran} of {total} mutants ({skipped} in annotations or"
            " TYPE_CHECKING blocks left out)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
