#!/usr/bin/env python3
"""Score our tables on every vLLM release against the best reference there is.

    python scripts/check_releases.py [VERSION ...] [-v] [--profile P] [--bytes]
                                     [--run-generator [--python PY]]

Two scores per release: attncmp as it is (the seed's nine feature columns) and
the same comparison over every column the reference page shows (``all``: DCP
from 0.17, Non-Causal from 0.21; attncmp has no option for that, so its parser
is loaded and given the longer column list).

References, in order: the golden in ``../shared/vllm/golden``; else the page the
release's source archive ships (``docs/design/attention_backends.md``, which
holds the tables up to 0.26); else, only with ``--run-generator``, the page
that release's own generator writes when run in a scratch copy of the tree.
That option runs a script from the vLLM tree (a developer check, never used
by the tests or CI, never by the extension); everything else only reads.

``--bytes`` also writes the vllm-page profile with the release's own page as
template (its gen: markers filled from 0.27 on) and compares it byte for byte
with the reference (``../shared/tools/pagesame``).
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import fetch  # scripts/ is on sys.path when run as a script

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
ATTNCMP = SHARED / "tools" / "attncmp"
PAGESAME = SHARED / "tools" / "pagesame"
PAGE = "docs/design/attention_backends.md"
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


def byte_identical(tree: Path, ref: Path, out: Path) -> str:
    """``SAME`` or pagesame's ``DIFFER ...``: the vllm-page profile with the release's
    page as template against the reference."""
    cmd = [sys.executable, "-m", "sphinxext_attn", "--root", str(tree), "--no-cache"]
    cmd += ["--profile", "vllm-page", "--template", str(tree / PAGE), "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return f"FAILED ({proc.stderr.strip().splitlines()[-1:]})"
    same = subprocess.run(
        [sys.executable, str(PAGESAME), str(out), str(ref)], capture_output=True, text=True
    )
    return same.stdout.strip()


def load_attncmp():  # type: ignore[no-untyped-def]
    """The scorer as a module (it is a script without a ``.py`` suffix)."""
    loader = importlib.machinery.SourceFileLoader("attncmp", str(ATTNCMP))
    spec = importlib.util.spec_from_loader("attncmp", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def page_columns(text: str) -> list[str]:
    """Every feature column a page's tables show besides Backend and Version."""
    out: list[str] = []
    for line in text.splitlines():
        if line.startswith("| Backend |") and "Dtypes" in line and "Description" not in line:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            out += [c for c in cells if c not in ("Backend", "Version") and c not in out]
    return out


def score(attncmp, ours: str, ref: str, columns: list[str], verbose: bool):  # type: ignore[no-untyped-def]
    """(matched, total, mismatch lines) of ``ours`` against ``ref`` over ``columns``."""
    attncmp.SEED_FEATURE_COLS = columns
    cand, gold = attncmp.parse(ours), attncmp.parse(ref)
    lines: list[str] = []
    if verbose:
        import contextlib
        import io

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            res = attncmp.score(cand, gold, True)
        lines = buf.getvalue().splitlines()
    else:
        res = attncmp.score(cand, gold, False)
    matched = sum(m for k, (m, _) in res.items() if k != "extra_rows")
    total = sum(t for _, t in res.values())
    return matched, total, lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*", default=DEFAULT)
    parser.add_argument("-v", "--verbose", action="store_true", help="list every mismatch")
    parser.add_argument("--profile", default="vllm-page", choices=("vllm-page", "runtime"))
    parser.add_argument(
        "--run-generator",
        action="store_true",
        help="where there is no other reference, run the release's own generator",
    )
    parser.add_argument(
        "--python",
        default="python3",
        help="the Python --run-generator uses (needs what the generator imports, e.g. regex)",
    )
    parser.add_argument(
        "--bytes",
        action="store_true",
        help="also compare the vllm-page profile, templated on the release's page, "
        "byte for byte with the reference",
    )
    args = parser.parse_args()
    identical: list[str] = []
    compared = 0
    work = Path(tempfile.mkdtemp(prefix="attn-check-"))
    attncmp = load_attncmp()
    seed_columns = list(attncmp.SEED_FEATURE_COLS)
    worst = {"seed": 100.0, "all": 100.0}
    try:
        for version in args.versions:
            tree = fetch(version)
            ours = work / f"ours-{version}.md"
            subprocess.run(
                [sys.executable, "-m", "sphinxext_attn", "--root", str(tree)]
                + ["--profile", args.profile, "-o", str(ours)],
                check=True,
                capture_output=True,
            )
            ref = reference(version, tree, work, args.python if args.run_generator else None)
            if ref is None:
                print(f"{version}: no reference (try --run-generator)")
                continue
            ours_text = ours.read_text(encoding="utf-8")
            ref_text = ref[0].read_text(encoding="utf-8")
            every = seed_columns + [c for c in page_columns(ref_text) if c not in seed_columns]
            figures = []
            for kind, columns in (("seed", seed_columns), ("all", every)):
                matched, total, lines = score(attncmp, ours_text, ref_text, columns, args.verbose)
                pct = 100.0 * matched / max(total, 1)
                worst[kind] = min(worst[kind], pct)
                figures.append(f"{kind} {matched}/{total} {pct:.2f}%")
            extra = [c for c in every if c not in seed_columns]
            print(f"{version}: {'  '.join(figures)}  ({ref[1]}; +{', '.join(extra) or '-'})")
            for line in lines:
                if line.startswith("  "):
                    print(line)
            if args.bytes:
                compared += 1
                same = byte_identical(tree, ref[0], work / f"templated-{version}.md")
                identical += [version] if same == "SAME" else []
                print(f"  bytes (release page as template): {same}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"lowest: seed {worst['seed']:.2f}%, all columns {worst['all']:.2f}%")
    if args.bytes:
        print(f"byte-identical: {len(identical)}/{compared} ({', '.join(identical) or '-'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
