"""PDFs build with Sphinx's default engine (pdflatex) and with xelatex (``tox -e pdf``).

No change to the project's ``conf.py`` is needed: the extension gives the
LaTeX writer symbols each engine can typeset (``sphinxextattn.sty``). The
docs of this project are built with live tables from vLLM 0.33.0: every
backend name is in the PDF's text, and wide tables fit (no overfull hbox
over 20pt in the LaTeX log). Skips, with the reason, only where latexmk or
pdftotext is missing, and fails then when ``ATTN_REQUIRE_TREES=1`` (CI).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import vllm_trees
from attn_sphinx_util import MINI_TREE

if TYPE_CHECKING:
    from sphinxext_attn.model.records import Analysis

pytestmark = pytest.mark.pdf

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
ENGINES = ["pdflatex", "xelatex"]
MAX_OVERFULL_PT = 20.0


def _need_tex(engine: str) -> None:
    for tool in ("latexmk", engine, "pdftotext"):
        if shutil.which(tool) is None:
            vllm_trees.unavailable(
                f"{tool} is not installed (apt-get install texlive-latex-extra texlive-xetex "
                "latexmk xindy fonts-freefont-otf poppler-utils)"
            )


def _latexpdf(
    src: Path, out: Path, engine: str, env: dict[str, str], doctrees: Path | None = None
) -> tuple[Path, str]:
    """``sphinx -M latexpdf`` with ``engine``. ``doctrees``: a folder the engines share,
    so the second reads nothing (the LaTeX writer and TeX still run per engine:
    ``latex_engine`` changes what is written, not what is read)."""
    where = ["-d", str(doctrees)] if doctrees is not None else []
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-M",
            "latexpdf",
            str(src),
            str(out),
            *where,
            "-q",
            "-W",
            "--keep-going",
            "-D",
            f"latex_engine={engine}",
        ],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    pdfs = list((out / "latex").glob("*.pdf"))
    tail = (proc.stdout + proc.stderr)[-4000:]
    assert proc.returncode == 0 and len(pdfs) == 1, tail
    return pdfs[0], tail


def _text(pdf: Path) -> str:
    proc = subprocess.run(
        ["pdftotext", "-enc", "UTF-8", str(pdf), "-"], capture_output=True, text=True, check=True
    )
    return re.sub(r"_\s+", "_", proc.stdout)  # a name broken after "_" in a narrow cell


def _overfull(log: Path) -> list[float]:
    text = log.read_text(encoding="latin-1")
    return [float(x) for x in re.findall(r"Overfull \\hbox \(([0-9.]+)pt too wide\)", text)]


def _has_name(text: str, name: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text) is not None


@pytest.fixture(scope="module")
def docs_doctrees(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The docs' doctrees with live 0.33.0 tables, read by the first engine's build and
    reused by the second (one Sphinx read of the docs for both PDFs)."""
    return tmp_path_factory.mktemp("docs-doctrees")


@pytest.fixture(scope="module")
def analysis_033() -> Analysis:
    return vllm_trees.analysis("0.33.0", "runtime")


@pytest.mark.realtree
@pytest.mark.parametrize("engine", ENGINES)
def test_docs_pdf_with_live_033_tables(tmp_path, engine, docs_doctrees, analysis_033):
    _need_tex(engine)
    tree = vllm_trees.tree("0.33.0")
    env = {"ATTN_VLLM_TREE": str(tree)}
    pdf, _ = _latexpdf(DOCS, tmp_path / "out", engine, env, docs_doctrees)
    text = _text(pdf)
    analysis = analysis_033
    names = {b.name for b in analysis.backends} | {p.name for p in analysis.mla_prefill}
    names |= {n for p in analysis.priorities for n in p.backends}
    assert len(names) > 30
    missing = sorted(n for n in names if not _has_name(text, n))
    assert not missing, f"backend names not in the {engine} PDF: {missing}"
    assert "✓" in text and "×" in text  # ✅ and ❌, as the symbols the package maps them to
    log = pdf.with_suffix(".log")
    too_wide = [pt for pt in _overfull(log) if pt > MAX_OVERFULL_PT]
    assert not too_wide, f"overfull hboxes over {MAX_OVERFULL_PT}pt in {log}: {too_wide}"


@pytest.mark.parametrize("engine", ENGINES)
def test_a_plain_project_needs_no_latex_settings(tmp_path, engine):
    """A conf.py with only the extension and the tree: every symbol of the cells typesets."""
    _need_tex(engine)
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        f'extensions = ["sphinxext_attn"]\nattention_backends_root = {str(MINI_TREE)!r}\n'
    )
    (src / "index.rst").write_text(
        "Tables\n======\n\n.. attention-backends::\n\nSymbols in prose too: ✅ ❌ † ‡ ≥8.0\n"
    )
    pdf, _ = _latexpdf(src, tmp_path / "out", engine, {})
    text = _text(pdf)
    assert "FLASH_ATTN" in text and "TRITON_ATTN" in text
    assert "✓" in text and "×" in text and "≥" in text and "†" in text
    log = pdf.with_suffix(".log").read_text(encoding="latin-1")
    assert "Missing character" not in log
    assert (tmp_path / "out" / "latex" / "sphinxextattn.sty").is_file()
