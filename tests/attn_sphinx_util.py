"""Helpers of the Sphinx tests: copy a test root, build it, read tables back out of HTML."""

from __future__ import annotations

import inspect
import os
import shutil
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import sphinx
from sphinx.testing.util import SphinxTestApp

TESTS = Path(__file__).parent
ROOTS = TESTS / "roots"
MINI_TREE = TESTS / "trees" / "mini"


#: Sphinx prints ``[type.subtype]`` after warnings from 7.3 on (``show_warning_types``)
SHOWS_TYPES = sphinx.version_info >= (7, 3)


def has_type(text: str, typ: str) -> bool:
    """``[typ]`` follows a warning in ``text`` (below Sphinx 7.3 as the patch below shows it)."""
    return f"[{typ}]" in text


def _show_warning_types() -> None:
    """Below Sphinx 7.3, write ``[type.subtype]`` after each warning as 7.3's
    ``show_warning_types`` does, so the type checks check something in ``tox -e oldest``."""
    from sphinx.util import logging as sphinx_logging

    translate = sphinx_logging.WarningLogRecordTranslator.filter

    def with_type(self: Any, record: Any) -> bool:
        kept: bool = translate(self, record)
        kind = getattr(record, "type", None)
        if kind and not getattr(record, "attn_typed", False):
            sub = getattr(record, "subtype", None)
            record.msg = f"{record.msg} [{kind}.{sub}]" if sub else f"{record.msg} [{kind}]"
            record.attn_typed = True
        return kept

    sphinx_logging.WarningLogRecordTranslator.filter = with_type  # type: ignore[method-assign]


if not SHOWS_TYPES:
    _show_warning_types()


#: SphinxTestApp takes ``warningiserror`` from Sphinx 7.3 on
_TAKES_WARNINGISERROR = "warningiserror" in inspect.signature(SphinxTestApp.__init__).parameters


def sphinx_project(
    dest: Path,
    pages: dict[str, str],
    conf: str = "",
    *,
    extensions: tuple[str, ...] = ("sphinxext_attn",),
    toctree: bool = False,
) -> Path:
    """A Sphinx source folder ``dest/src``: ``conf.py`` loading ``extensions`` plus the
    lines ``conf``, and one file per page (``name`` -> ``name.rst`` unless it has a
    suffix). With ``toctree`` the index lists the other pages."""
    src = dest / "src"
    src.mkdir(parents=True, exist_ok=True)
    (src / "conf.py").write_text(f"extensions = {list(extensions)!r}\n{conf}", encoding="utf-8")
    others = [Path(name).stem for name in pages if Path(name).stem != "index"]
    for name, text in pages.items():
        if toctree and Path(name).stem == "index" and others:
            text += "\n.. toctree::\n\n" + "".join(f"   {other}\n" for other in others)
        (src / (name if Path(name).suffix else f"{name}.rst")).write_text(text, encoding="utf-8")
    return src


def copy_root(name: str, dest: Path) -> Path:
    """A private copy of ``tests/roots/test-<name>`` (builds write into it)."""
    src = dest / "src"
    shutil.copytree(ROOTS / f"test-{name}", src)
    return src


def copy_tree(dest: Path, tree: Path = MINI_TREE) -> Path:
    out = dest / "tree"
    shutil.copytree(tree, out)
    return out


def build(
    make_app: Any,
    srcdir: Path,
    buildername: str = "html",
    *,
    tree: Path | None = MINI_TREE,
    profile: str | None = "vllm-page",
    **kwargs: Any,
) -> Any:
    """Build ``srcdir``. The page-rule tests pin vLLM's own reading (the default
    here); runtime tests pass it, and ``profile=None`` leaves the setting unset
    (the extension's default configuration)."""
    overrides = dict(kwargs.pop("confoverrides", {}))
    if tree is not None:
        overrides.setdefault("attention_backends_root", str(tree))
    if profile is not None:
        overrides.setdefault("attention_backends_profile", profile)
    if SHOWS_TYPES:
        overrides.setdefault("show_warning_types", True)
    strict = kwargs.pop("warningiserror", False)
    if strict and _TAKES_WARNINGISERROR:
        kwargs["warningiserror"] = True
    app = make_app(buildername, srcdir=srcdir, confoverrides=overrides, **kwargs)
    if strict and not _TAKES_WARNINGISERROR:
        app.warningiserror = True  # Sphinx < 7.3: the test app does not pass it on
    app.build()
    app.cleanup()  # so a second app in the same test registers its nodes cleanly
    return app


def warnings(app: Any) -> str:
    return app._warning.getvalue()


class Table:
    """A table read back from HTML: classes, caption, header and body cells."""

    def __init__(self, classes: list[str]) -> None:
        self.classes = classes
        self.caption = ""
        self.header: list[str] = []
        self.rows: list[list[str]] = []

    def markdown(self) -> list[str]:
        lines = ["| " + " | ".join(self.header) + " |"]
        lines.append("|" + "|".join("---" for _ in self.header) + "|")
        lines += ["| " + " | ".join(r) + " |" for r in self.rows]
        return lines


#: markdown marks for inline markup inside cells
MARKS = {"code": "`", "strong": "**"}


class _TableParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: list[Table] = []
        self.current: Table | None = None
        self.cell: list[str] | None = None
        self.in_caption = False
        self.in_head = False
        self.row: list[str] | None = None
        self.skip = 0
        #: HTML builders put a table's title above its scroll box (p.attn-caption)
        self.pending: str | None = None
        self.in_pending = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            self.current = Table((a.get("class") or "").split())
            self.current.caption, self.pending = (self.pending or "").strip(), None
        elif tag == "p" and "attn-caption" in (a.get("class") or "").split():
            self.pending, self.in_pending = "", True
        elif self.in_pending and tag == "a" and "headerlink" in (a.get("class") or ""):
            self.skip += 1
        elif self.current is None:
            return
        elif tag == "caption":
            self.in_caption = True
        elif tag == "a" and "headerlink" in (a.get("class") or ""):
            self.skip += 1
        elif tag == "thead":
            self.in_head = True
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.cell = []
        elif tag in ("code", "strong") and self.cell is not None:
            self.cell.append(MARKS[tag])

    def handle_endtag(self, tag: str) -> None:
        if self.in_pending:
            if tag == "p":
                self.in_pending = False
            elif tag == "a" and self.skip:
                self.skip -= 1
            return
        if self.current is None:
            return
        if tag == "table":
            self.tables.append(self.current)
            self.current = None
        elif tag == "caption":
            self.in_caption = False
        elif tag == "a" and self.skip:
            self.skip -= 1
        elif tag == "thead":
            self.in_head = False
        elif tag in ("code", "strong") and self.cell is not None:
            self.cell.append(MARKS[tag])
        elif tag in ("td", "th") and self.cell is not None and self.row is not None:
            self.row.append("".join(self.cell).strip())
            self.cell = None
        elif tag == "tr" and self.row is not None:
            if self.in_head:
                self.current.header = self.row
            else:
                self.current.rows.append(self.row)
            self.row = None

    def handle_data(self, data: str) -> None:
        if self.in_pending and not self.skip:
            self.pending = (self.pending or "") + data
            return
        if self.current is None or self.skip:
            return
        if self.in_caption:
            self.current.caption += data
        elif self.cell is not None:
            self.cell.append(data)


def html_tables(html: str) -> list[Table]:
    parser = _TableParser()
    parser.feed(html)
    return parser.tables


def page_tables(app: Any, docname: str) -> list[Table]:
    return html_tables((Path(app.outdir) / f"{docname}.html").read_text(encoding="utf-8"))


# -- counting opens under a folder, in this process and in forked readers.
# Audit hooks cannot be removed, so the hook is gated by _PREFIX; it writes to
# an inherited file descriptor so that parallel readers' opens are seen too.

_PREFIX: list[str] = []
_FD: list[int] = []


def _audit(event: str, args: tuple) -> None:
    if event != "open" or not _PREFIX or not isinstance(args[0], str | bytes | os.PathLike):
        return
    path = os.path.abspath(os.fsdecode(args[0]))
    if path.startswith(_PREFIX[0]):
        os.write(_FD[0], (path + "\n").encode())


if not getattr(sys, "_attn_audit_installed", False):
    sys.addaudithook(_audit)
    sys._attn_audit_installed = True  # type: ignore[attr-defined]


class counting_opens:
    """``with counting_opens(tree) as opened:`` fills ``opened`` (path -> count) on exit."""

    def __init__(self, folder: Path) -> None:
        self.folder = os.path.realpath(folder) + os.sep
        self.counts: dict[str, int] = {}

    def __enter__(self) -> dict[str, int]:
        self.log = tempfile.TemporaryFile()
        _FD[:] = [self.log.fileno()]
        _PREFIX[:] = [self.folder]
        return self.counts

    def __exit__(self, *exc: object) -> None:
        _PREFIX.clear()
        self.log.seek(0)
        for line in self.log.read().decode().splitlines():
            self.counts[line] = self.counts.get(line, 0) + 1
        self.log.close()
