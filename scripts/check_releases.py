#!/usr/bin/env python3
"""Score our tables on every vLLM release against the best reference there is.

    python scripts/check_releases.py [VERSION ...] [-v] [--run-generator]

References, in order: the golden in ``../shared/vllm/golden``; else the page the
release's source archive ships (``docs/design/attention_backends.md``, which
holds the tables up to 0.26); else, only with ``--run-generator``, the page
that release's own generator writes when run in a scratch copy of the tree.
That option runs a script from the vLLM tree (a developer check, never used
by the tests or CI, never by the extension); everything else only reads.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import fetch  # scripts/ is on sys.path when run as a script

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
ATTNCMP = SHARED / "tools" / "attncmp"
DEFAULT = [f"0.{minor}.0" for minor in range(16, 34)]
STUB = """import os
def open(path, mode="w"):
    import builtins
    return builtins.open(os.environ["ATTN_GOLDEN_OUT"], mode, encoding="utf-8")
def set_edit_path(*args, **kwargs):
    pass
"""


def run_generator(tree: Path, out: Path, python: str) -> bool:
    """Run the release's own generator in a scratch copy; True if it wrote ``out``."""
    scratch = Path(tempfile.mkdtemp(prefix="attn-gen-"))
    try:
        copy = scratch / "tree"
        shutil.copytree(tree, copy)
        old = copy / "tools" / "pre_commit" / "generate_attention_backend_docs.py"
        new = copy / "docs" / "mkdocs" / "gen_files" / "generate_attention_backends.py"
        env = dict(os.environ, ATTN_GOLDEN_OUT=str(out))
        if old.is_file():
            cmd, cwd = [python, str(old), "-o", str(out)], copy
        elif new.is_file():
            (scratch / "mkdocs_gen_files.py").write_text(STUB, encoding="utf-8")
            env["PYTHONPATH"] = f"{scratch}{os.pathsep}{new.parent}"
            cmd, cwd = [python, str(new)], new.parent
        else:
            return False
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, timeout=300, check=False)
        return proc.returncode == 0 and out.is_file()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def reference(
    version: str, tree: Path, work: Path, generate: str | None
) -> tuple[Path, str] | None:
    golden = SHARED / "vllm" / "golden" / f"attention_backends-{version}.md"
    if golden.is_file():
        return golden, "golden"
    shipped = tree / "docs" / "design" / "attention_backends.md"
    if shipped.is_file() and "| Priority | Backend |" in shipped.read_text(encoding="utf-8"):
        return shipped, "page in archive"
    out = work / f"generated-{version}.md"
    if generate and run_generator(tree, out, generate):
        return out, "own generator"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*", default=DEFAULT)
    parser.add_argument("-v", "--verbose", action="store_true", help="list every mismatch")
    parser.add_argument(
        "--run-generator",
        nargs="?",
        const="python3",
        metavar="PYTHON",
        help="run the release's own generator with PYTHON (needs what it imports, e.g. regex)",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="attn-check-"))
    worst = 100.0
    try:
        for version in args.versions:
            tree = fetch(version)
            ours = work / f"ours-{version}.md"
            subprocess.run(
                [sys.executable, "-m", "sphinxext_attn", "--root", str(tree), "-o", str(ours)],
                check=True,
                capture_output=True,
            )
            ref = reference(version, tree, work, args.run_generator)
            if ref is None:
                print(f"{version}: no reference (try --run-generator)")
                continue
            proc = subprocess.run(
                [sys.executable, str(ATTNCMP), str(ours), str(ref[0]), "-v"],
                capture_output=True,
                text=True,
                check=True,
            )
            total = re.search(r"^TOTAL (\d+)/(\d+) (\S+)", proc.stdout, re.M)
            assert total, proc.stdout
            worst = min(worst, 100.0 * int(total.group(1)) / int(total.group(2)))
            print(f"{version}: {total.group(1)}/{total.group(2)} {total.group(3)}  ({ref[1]})")
            if args.verbose:
                for line in proc.stdout.splitlines():
                    if line.startswith("  "):
                        print(line)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"lowest: {worst:.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
