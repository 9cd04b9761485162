"""A vLLM release's source tree, fetched from the package index into a cache.

``python -m sphinxext_attn fetch 0.33.0`` and ``attention_backends_root =
"vllm==0.33.0"`` need a tree without cloning vLLM. The release's source
archive (sdist) is found on the index pip is configured with (its simple
API), checked against the index's hash and unpacked: only the files static
analysis reads (``.py`` under ``vllm/``, ``tools/``, ``docs/`` and the docs'
markdown). Nothing is built or run: ``pip download --no-binary`` would build
vLLM to read its metadata, which needs CUDA and torch.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

VERSION = re.compile(r"\d+(\.\d+)*((a|b|rc|\.post|\.dev)\d+)*\Z")
#: a ``conf.py`` root that names a release instead of a folder
RELEASE_ROOT = re.compile(r"vllm==(?P<version>.+)\Z")
DEFAULT_INDEX = "https://pypi.org/simple/"
KEPT_FOLDERS = ("vllm", "tools", "docs")
TIMEOUT = 60


class FetchError(Exception):
    """The release cannot be had; the message says why in one line."""


def cache_dir() -> Path:
    """``$VLLM_TREES``, else ``~/.cache/sphinxext-attn/trees``."""
    given = os.environ.get("VLLM_TREES")
    return Path(given) if given else Path.home() / ".cache" / "sphinxext-attn" / "trees"


def check_version(version: str) -> str:
    if not VERSION.match(version):
        raise ValueError(f"{version!r} is not a release version; give one such as 0.33.0")
    return version


def index_url() -> str:
    """The index pip uses: ``$PIP_INDEX_URL``, pip's configuration, else PyPI."""
    if os.environ.get("PIP_INDEX_URL"):
        return os.environ["PIP_INDEX_URL"]
    try:
        found = subprocess.run(
            [sys.executable, "-m", "pip", "config", "get", "global.index-url"],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        found = ""
    return found or DEFAULT_INDEX


class _Links(HTMLParser):
    """The anchors of a PEP 503 project page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.links.append(href)


def _read(url: str) -> bytes:
    request = urllib.request.Request(
        url, headers={"Accept": "application/vnd.pypi.simple.v1+json, text/html;q=0.5"}
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:  # noqa: S310
            data: bytes = response.read()
            return data
    except (OSError, ValueError) as exc:
        raise FetchError(f"cannot reach the package index at {url}: {exc}") from None


def sdist_link(version: str, index: str) -> str:
    """The URL (with its ``#sha256=`` fragment) of ``vllm-VERSION.tar.gz`` on ``index``."""
    page_url = urljoin(index.rstrip("/") + "/", "vllm/")
    if urlsplit(page_url).scheme == "file" and Path(urlsplit(page_url).path).is_dir():
        page_url += "index.html"
    text = _read(page_url)
    wanted = f"vllm-{version}.tar.gz"
    try:
        files = json.loads(text)["files"]
        links = [f"{f['url']}#sha256={f.get('hashes', {}).get('sha256', '')}" for f in files]
    except (ValueError, KeyError, TypeError):
        parser = _Links()
        parser.feed(text.decode("utf-8", "replace"))
        links = parser.links
    for link in links:
        if link.split("#")[0].rsplit("/", 1)[-1] == wanted:
            return urljoin(page_url, link)
    raise FetchError(f"the package index {index} has no source archive {wanted}")


def _kept(name: str) -> str | None:
    """The archive member's path inside the tree if analysis reads it."""
    parts = name.split("/", 1)
    if len(parts) < 2 or ".." in parts[1].split("/") or parts[1].startswith("/"):
        return None
    rel = parts[1]
    if rel.split("/", 1)[0] in KEPT_FOLDERS and rel.endswith(".py"):
        return rel
    return rel if rel.startswith("docs/") and rel.endswith(".md") else None


def fetch(version: str, dest: Path | None = None) -> Path:
    """The tree of vLLM ``version`` (fetched once; a tree in the cache is reused)."""
    check_version(version)
    dest = dest or cache_dir()
    tree = dest / f"vllm-{version}"
    if (tree / "vllm" / "__init__.py").is_file():
        return tree
    link = sdist_link(version, index_url())
    data = _read(link.split("#")[0])
    expected = link.partition("#sha256=")[2]
    if expected and hashlib.sha256(data).hexdigest() != expected:
        raise FetchError(f"vllm-{version}.tar.gz does not match the index's sha256")
    dest.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".vllm-{version}.", dir=dest))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            for member in archive.getmembers():
                rel = _kept(member.name) if member.isfile() else None
                source = archive.extractfile(member) if rel else None
                if rel and source is not None:
                    target = work / rel
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(source.read())
        if not (work / "vllm" / "__init__.py").is_file():
            raise FetchError(f"vllm-{version}.tar.gz holds no vllm/ package")
        work.rename(tree)
    except (tarfile.TarError, OSError) as exc:
        raise FetchError(f"cannot unpack vllm-{version}.tar.gz: {exc}") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return tree
