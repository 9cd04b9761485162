"""``fetch VERSION`` and ``attention_backends_root = "vllm==VERSION"``: a release's
source tree from the package index pip uses, into the cache (issue 35). Tested on a
local index (a file:// simple page); the real index only under the ``network`` marker."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import tarfile
from pathlib import Path

import pytest
from attn_sphinx_util import MINI_TREE, sphinx_project
from sphinx.cmd.build import build_main

from sphinxext_attn.cli.main import main


def _sdist(version: str) -> bytes:
    """A vLLM-shaped source archive: the mini tree's vllm/, a build script, docs."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(MINI_TREE / "vllm", arcname=f"vllm-{version}/vllm")
        members = (
            ("vllm/__init__.py", ""),
            ("setup.py", "raise SystemExit('never run')\n"),
            ("docs/a.md", "x"),
        )
        for name, text in members:
            info = tarfile.TarInfo(f"vllm-{version}/{name}")
            info.size = len(text)
            archive.addfile(info, io.BytesIO(text.encode()))
    return buffer.getvalue()


@pytest.fixture
def index(tmp_path, monkeypatch) -> Path:
    """A simple index holding vllm 9.9.9 (and 9.9.7 with a wrong hash); the cache empty."""
    files = tmp_path / "files"
    files.mkdir()
    good = _sdist("9.9.9")
    (files / "vllm-9.9.9.tar.gz").write_bytes(good)
    (files / "vllm-9.9.7.tar.gz").write_bytes(_sdist("9.9.7"))
    page = tmp_path / "index" / "vllm"
    page.mkdir(parents=True)
    digest = hashlib.sha256(good).hexdigest()
    page.joinpath("index.html").write_text(
        f'<a href="../../files/vllm-9.9.9.tar.gz#sha256={digest}">vllm-9.9.9.tar.gz</a>\n'
        f'<a href="../../files/vllm-9.9.7.tar.gz#sha256={"0" * 64}">vllm-9.9.7.tar.gz</a>\n'
    )
    monkeypatch.setenv("PIP_INDEX_URL", (tmp_path / "index").as_uri() + "/")
    monkeypatch.setenv("VLLM_TREES", str(tmp_path / "cache"))
    return tmp_path


def run(args: list[str]) -> int:
    try:
        return main(args)
    except SystemExit as exc:
        return int(exc.code or 0)


def test_fetch_unpacks_what_analysis_reads_and_prints_the_path(index, capsys):
    assert run(["fetch", "9.9.9"]) == 0
    tree = Path(capsys.readouterr().out.strip())
    assert tree == index / "cache" / "vllm-9.9.9"
    assert (tree / "vllm" / "v1" / "attention" / "backends" / "registry.py").is_file()
    assert (tree / "docs" / "a.md").is_file() and not (tree / "setup.py").exists()
    shutil.rmtree(index / "files")  # the cache answers from now on
    assert run(["fetch", "9.9.9"]) == 0 and capsys.readouterr().out.strip() == str(tree)
    assert run(["--root", str(tree), "-o", "-"]) == 0  # a tree the page command reads


@pytest.mark.parametrize(
    ("version", "code", "words"),
    [
        ("9.9.8", 1, ("vllm==9.9.8:", "has no source archive vllm-9.9.8.tar.gz")),
        ("9.9.7", 1, ("vllm==9.9.7:", "does not match the index's sha256")),
        ("latest", 2, ("'latest' is not a release version", "0.33.0")),
    ],
)
def test_fetch_failures_are_one_line(index, capsys, version, code, words):
    assert run(["fetch", version]) == code
    out = capsys.readouterr()
    assert out.out == "" and len(out.err.strip().splitlines()) == 1, out.err
    assert out.err.startswith("sphinxext-attn fetch: ")
    for word in words:
        assert word in out.err, out.err
    assert not (index / "cache" / f"vllm-{version}").exists()


def test_fetch_without_an_index(index, capsys, monkeypatch):
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple/")
    assert run(["fetch", "9.9.9"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot reach the package index at http://127.0.0.1:9" in err


def _build(tmp_path: Path, capsys, root: str) -> str:
    conf = f"attention_backends_root = {root!r}\nattention_backends_profile = 'vllm-page'\n"
    page = "Index\n=====\n\n.. attention-backends-standard::\n"
    src = sphinx_project(tmp_path / "site", {"index": page}, conf)
    build_main(["-q", "-b", "html", str(src), str(tmp_path / "out")])
    return capsys.readouterr().err


def test_conf_root_names_a_release(index, capsys):
    text = _build(index, capsys, "vllm==9.9.9")
    assert "ERROR" not in text and "WARNING" not in text, text
    html = (index / "out" / "index.html").read_text()
    assert "FLASH_ATTN" in html
    assert (index / "cache" / "vllm-9.9.9" / "vllm").is_dir()


def test_conf_root_release_without_an_index_is_one_error(index, capsys, monkeypatch):
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple/")
    text = _build(index, capsys, "vllm==9.9.9")
    assert text.count("ERROR") == 1 and "WARNING" not in text, text
    assert "attention_backends_root = 'vllm==9.9.9': cannot fetch the release" in text
    assert "cannot reach the package index" in text and "Traceback" not in text


@pytest.mark.network
@pytest.mark.skipif(not os.environ.get("ATTN_NETWORK"), reason="set ATTN_NETWORK=1 to use PyPI")
def test_fetch_a_real_release(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("VLLM_TREES", str(tmp_path))
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    assert run(["fetch", "0.16.0"]) == 0
    tree = Path(capsys.readouterr().out.strip())
    assert (tree / "vllm" / "v1" / "attention" / "backends" / "registry.py").is_file()
