"""Packaging and the pre-commit hook, with the real tools (``tox -e tools``).

* ``python -m build`` makes a wheel and an sdist that ``twine check --strict``
  accepts; the sdist carries the tests and the docs; the wheel installs in a
  fresh virtualenv and renders a page (command line and Sphinx).
* ``pre-commit try-repo`` runs the ``attention-backends`` hook of this
  repository on a throwaway git repository holding a small vLLM-shaped tree:
  a stale page is rewritten and the hook fails, then it passes.

These need network access to the package index (the fresh virtualenvs install
Sphinx); they skip when a tool is missing, and fail then in CI
(``ATTN_REQUIRE_TREES=1``).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import vllm_trees
from attn_sphinx_util import MINI_TREE
from treebuilder import build_tree

from sphinxext_attn.cli.main import main

pytestmark = [pytest.mark.tools, pytest.mark.network]

REPO = Path(__file__).resolve().parents[2]
PAGE = "docs/design/attention_backends.md"


def _need(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        vllm_trees.unavailable(
            f"{module} is not installed (pip install '.[tools]' or tox -e tools)"
        )


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: int = 900):
    return subprocess.run(
        cmd,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _source_files() -> list[str]:
    """The repository's files as a clean clone has them (tracked plus new, not ignored)."""
    if shutil.which("git") and (REPO / ".git").exists():
        proc = _run(["git", "ls-files", "-co", "--exclude-standard"], REPO)
        if proc.returncode == 0:
            return [f for f in proc.stdout.splitlines() if (REPO / f).is_file()]
    ignore = ("/.tox/", "/.git/", "/_build/", "__pycache__", ".egg-info", "/dist/", "/build/")
    return [
        str(p.relative_to(REPO))
        for p in REPO.rglob("*")
        if p.is_file() and not any(part in f"/{p.relative_to(REPO)}" for part in ignore)
    ]


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> tuple[Path, Path, list[str]]:
    _need("build")
    work = tmp_path_factory.mktemp("build")
    src = work / "src"
    files = _source_files()
    for rel in files:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, src / rel)
    proc = _run([sys.executable, "-m", "build", "--outdir", str(work / "dist"), str(src)], work)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (sdist,) = (work / "dist").glob("*.tar.gz")
    (wheel,) = (work / "dist").glob("*.whl")
    return sdist, wheel, files


def test_twine_check_strict(dists):
    _need("twine")
    sdist, wheel, _ = dists
    proc = _run([sys.executable, "-m", "twine", "check", "--strict", str(sdist), str(wheel)], REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("PASSED") == 2, proc.stdout


def test_sdist_carries_tests_and_docs(dists):
    sdist, _, files = dists
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    wanted = [f for f in files if f.startswith(("tests/", "docs/", "sphinxext_attn/"))]
    wanted += ["README.md", "pyproject.toml", "tox.ini", ".pre-commit-hooks.yaml"]
    missing = sorted(set(wanted) - names)
    assert not missing, missing
    assert "tests/roots/test-basic/conf.py" in names and "docs/conf.py" in names


def test_wheel_holds_the_package_only(dists):
    _, wheel, _ = dists
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
    assert "sphinxext_attn/__init__.py" in names
    assert "sphinxext_attn/attention_backends.css" in names
    assert "sphinxext_attn/py.typed" in names
    assert any(n.endswith(".sty") for n in names), names
    assert not [n for n in names if n.startswith(("tests/", "docs/", "vllm/"))]
    metadata = next(n for n in names if n.endswith("METADATA"))
    with zipfile.ZipFile(wheel) as whl:
        text = whl.read(metadata).decode()
    assert "Requires-Dist: sphinx>=7.2.1" in text


def test_wheel_installs_and_renders_in_a_fresh_venv(dists, tmp_path):
    _, wheel, _ = dists
    venv = tmp_path / "venv"
    proc = _run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    py = venv / "bin" / "python"
    proc = _run([str(py), "-m", "pip", "install", "--quiet", str(wheel)], tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = tmp_path / "page.md"
    proc = _run(
        [str(venv / "bin" / "sphinxext-attn"), "--root", str(MINI_TREE), "-o", str(out)], tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert "## Backend Priority (CUDA)" in out.read_text(encoding="utf-8")
    assert "`FLASH_ATTN`" in out.read_text(encoding="utf-8")
    # and a Sphinx page with a live table
    src = tmp_path / "site"
    src.mkdir()
    (src / "conf.py").write_text(
        f'extensions = ["sphinxext_attn"]\nattention_backends_root = {str(MINI_TREE)!r}\n'
    )
    (src / "index.rst").write_text("Site\n====\n\n.. attention-backends-standard::\n")
    proc = _run(
        [str(py), "-m", "sphinx", "-W", "-q", "-b", "html", str(src), str(tmp_path / "html")],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    html = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    assert "attn-features" in html and "FLASH_ATTN" in html


def _git(repo: Path, *args: str) -> None:
    proc = _run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], repo)
    assert proc.returncode == 0, proc.stderr


def test_precommit_hook_rewrites_a_stale_page_then_passes(tmp_path):
    _need("pre_commit")
    if not shutil.which("git"):
        vllm_trees.unavailable("git is not installed")
    repo = build_tree(tmp_path / "vllm-checkout")
    page = repo / PAGE
    page.parent.mkdir(parents=True)
    page.write_text("# stale\n", encoding="utf-8")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "a vLLM-shaped tree with a stale page")

    hook = [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "attention-backends"]
    env = {"PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    first = _run([*hook, "--all-files"], repo, env)
    assert first.returncode == 1, first.stdout + first.stderr
    assert "Failed" in first.stdout and "files were modified by this hook" in first.stdout
    assert f"Regenerated: {PAGE}" in first.stdout
    expected = tmp_path / "expected.md"
    assert main(["--root", str(repo), "--profile", "vllm-page", "-o", str(expected)]) == 0
    assert page.read_text(encoding="utf-8") == expected.read_text(encoding="utf-8")

    _git(repo, "add", "-A")
    second = _run([*hook, "--all-files"], repo, env)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "Passed" in second.stdout

    # a change outside the filter does not run it; a backend change does
    (repo / "README.md").write_text("unrelated\n")
    _git(repo, "add", "-A")
    skipped = _run([*hook, "--files", "README.md"], repo, env)
    assert skipped.returncode == 0 and "no files to check" in skipped.stdout, skipped.stdout

    backend = repo / "vllm" / "v1" / "attention" / "backends" / "flash_attn.py"
    text = backend.read_text(encoding="utf-8")
    assert "torch.float16, torch.bfloat16]" in text
    backend.write_text(text.replace("torch.float16, torch.bfloat16]", "torch.bfloat16]", 1))
    _git(repo, "add", "-A")
    changed = _run([*hook, "--files", str(backend.relative_to(repo))], repo, env)
    assert changed.returncode == 1 and f"Regenerated: {PAGE}" in changed.stdout, changed.stdout
    assert main(["--root", str(repo), "--profile", "vllm-page", "-o", str(expected)]) == 0
    assert page.read_text(encoding="utf-8") == expected.read_text(encoding="utf-8")
