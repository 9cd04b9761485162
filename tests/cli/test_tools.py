"""Packaging and the pre-commit hook, with the real tools (``tox -e tools``).

* ``python -m build`` makes a wheel and an sdist that ``twine check --strict``
  accepts; the sdist carries the tests and the docs; the wheel installs in a
  fresh virtualenv and renders a page (command line and Sphinx).
* ``pre-commit try-repo`` runs the ``attention-backends`` hook of this
  repository on throwaway git repositories holding real vLLM releases: the page
  a release ships passes untouched (0.25.0's tables, 0.33.0's gen: markers); a
  backend edit regenerates only its row, and the hook fails, then passes.

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


def _release_repo(version: str, where: Path) -> Path:
    """A git repository holding an unmodified copy of a release's tree."""
    repo = where / f"vllm-{version}"
    shutil.copytree(vllm_trees.tree(version), repo)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", f"vLLM {version} as released")
    return repo


@pytest.fixture(scope="module")
def precommit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One ``PRE_COMMIT_HOME`` for the hook tests: pre-commit installs the hook's
    environment (this repository and its dependencies) once and reuses it, as it
    does for a user, instead of once per test."""
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.mark.realtree
def test_precommit_hook_on_a_release_page(tmp_path, precommit_home):
    """pre-commit runs the hook on vLLM 0.25.0 as released: it passes and leaves the
    page byte for byte; a backend edit makes it regenerate the tables (vLLM's prose
    kept) and fail, then it passes; an unrelated change does not run it."""
    _need("pre_commit")
    if not shutil.which("git"):
        vllm_trees.unavailable("git is not installed")
    repo = _release_repo("0.25.0", tmp_path)
    page = repo / PAGE
    released = page.read_text(encoding="utf-8")
    hook = [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "attention-backends"]
    env = {"PRE_COMMIT_HOME": str(precommit_home), "SPHINXEXT_ATTN_CACHE_DIR": ""}
    first = _run([*hook, "--all-files"], repo, env)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "Passed" in first.stdout
    assert page.read_text(encoding="utf-8") == released

    (repo / "README.md").write_text("unrelated\n")
    _git(repo, "add", "-A")
    skipped = _run([*hook, "--files", "README.md"], repo, env)
    assert skipped.returncode == 0 and "no files to check" in skipped.stdout, skipped.stdout

    backend = repo / "vllm" / "v1" / "attention" / "backends" / "rocm_aiter_fa.py"
    text = backend.read_text(encoding="utf-8")
    old = "torch.float16, torch.bfloat16]"
    assert text.count(old) == 1
    backend.write_text(text.replace(old, "torch.bfloat16]"), encoding="utf-8")
    _git(repo, "add", "-A")
    changed = _run([*hook, "--files", str(backend.relative_to(repo))], repo, env)
    assert changed.returncode == 1 and f"Regenerated: {PAGE}" in changed.stdout, changed.stdout
    now = page.read_text(encoding="utf-8").splitlines()
    before = released.splitlines()
    differ = [(a, b) for a, b in zip(before, now, strict=True) if a != b]
    assert differ == [(a, a.replace("| fp16, bf16 |", "| bf16 |", 1)) for a, _ in differ]
    assert [a.split(" | ")[0] for a, _ in differ] == ["| `ROCM_AITER_FA`"]

    _git(repo, "add", "-A")
    second = _run([*hook, "--files", str(backend.relative_to(repo))], repo, env)
    assert second.returncode == 0 and "Passed" in second.stdout, second.stdout


@pytest.mark.realtree
def test_precommit_hook_leaves_a_marker_page_alone(tmp_path, precommit_home):
    """From 0.27 vLLM's page is handwritten with gen: markers its docs build fills:
    the hook passes without touching it, and fails naming a marker that is gone."""
    _need("pre_commit")
    if not shutil.which("git"):
        vllm_trees.unavailable("git is not installed")
    repo = _release_repo("0.33.0", tmp_path)
    page = repo / PAGE
    released = page.read_bytes()
    hook = [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "attention-backends"]
    env = {"PRE_COMMIT_HOME": str(precommit_home), "SPHINXEXT_ATTN_CACHE_DIR": ""}
    first = _run([*hook, "--files", "vllm/platforms/cuda.py"], repo, env)
    assert first.returncode == 0 and "Passed" in first.stdout, first.stdout + first.stderr
    assert page.read_bytes() == released

    page.write_bytes(released.replace(b'--8<-- "gen:table-minimax"', b""))
    _git(repo, "add", "-A")
    gone = _run([*hook, "--files", PAGE], repo, env)
    assert gone.returncode == 1, gone.stdout
    assert 'missing marker --8<-- "gen:table-minimax"' in gone.stdout


def readme_precommit_snippet() -> str:
    """The README's ``.pre-commit-config.yaml`` snippet, as a user copies it."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = text.split("```yaml\n")[1:]
    found = [b.split("```", 1)[0] for b in blocks if "id: attention-backends" in b]
    assert len(found) == 1, "one pre-commit snippet in the README"
    return found[0]


@pytest.mark.realtree
def test_the_readme_precommit_snippet_works_pinned_by_commit(tmp_path, precommit_home):
    """The README's snippet, its repo a clone of this repository and its rev that
    clone's commit (as the README says to pin until a tag exists), run by
    ``pre-commit run`` on vLLM 0.25.0: it passes and leaves the page alone."""
    _need("pre_commit")
    if not shutil.which("git"):
        vllm_trees.unavailable("git is not installed")
    clone = tmp_path / "sphinxext-attn"
    _git(tmp_path, "clone", "-q", str(REPO), str(clone))
    sha = _run(["git", "rev-parse", "HEAD"], clone).stdout.strip()
    snippet = readme_precommit_snippet()
    lines = []
    for line in snippet.splitlines():
        key = line.strip().lstrip("- ").split(":", 1)[0]
        if key == "repo":
            line = f"- repo: {clone}"
        elif key == "rev":
            line = f"  rev: {sha}"
        lines.append(line)
    repo = _release_repo("0.25.0", tmp_path / "release")
    released = (repo / PAGE).read_text(encoding="utf-8")
    (repo / ".pre-commit-config.yaml").write_text("repos:\n" + "\n".join(lines) + "\n")
    _git(repo, "add", "-A")
    env = {"PRE_COMMIT_HOME": str(precommit_home), "SPHINXEXT_ATTN_CACHE_DIR": ""}
    result = _run([sys.executable, "-m", "pre_commit", "run", "--all-files"], repo, env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed" in result.stdout
    assert (repo / PAGE).read_text(encoding="utf-8") == released
