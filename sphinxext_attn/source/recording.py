"""What a piece of work read from a :class:`~.tree.SourceTree`, and parsing
shared between trees.

A :class:`Recording` lists the paths a piece of work looked at, its warnings
and the views of each file its result rests on (:mod:`.views`): a cache keeps
the result while those views are unchanged. :class:`RecordedReads` is the part
of the tree that records, and that lets a tree start from what another parsed.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sphinxext_attn.model.records import Diagnostic
from sphinxext_attn.source.chunks import class_names, has_class, is_word
from sphinxext_attn.source.views import View

_BOUNDARY = re.compile(r"\b")
_KEYWORDS = ("import", "from")


def import_pattern(word: str) -> str:
    """The pattern of a line importing ``word`` (``import word``, ``from word...``)."""
    return rf"^\s*(?:from|import)\s+{re.escape(word)}\b"


def _imports(text: str, word: str) -> bool:
    """``re.search(import_pattern(word), text, re.M)``, found from the occurrences of
    ``word`` instead of a pattern tried at every position (a file read is searched
    for each package the code imports): before an occurrence, whitespace, then the
    keyword with only whitespace between it and its line's start."""
    found = text.find(word)
    while found != -1:
        after = found + len(word)
        if _BOUNDARY.match(text, after):
            gap = found
            while gap > 0 and text[gap - 1].isspace():
                gap -= 1
            for keyword in _KEYWORDS if gap < found else ():
                begin = gap - len(keyword)
                if begin >= 0 and text.startswith(keyword, begin):
                    line = text.rfind("\n", 0, begin) + 1
                    if text[line:begin].isspace() or line == begin:
                        return True
        found = text.find(word, found + 1)
    return False


def decode_source(data: bytes) -> str:
    """A file's text as Python decodes it (its encoding cookie, no BOM); raises
    ``SyntaxError``, ``LookupError`` or ``UnicodeDecodeError`` when it cannot."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    return text[1:] if text.startswith("\ufeff") else text


@dataclass
class Recording:
    """What one piece of work read from a tree (see :meth:`SourceTree.recording`):
    enough to tell whether its result still holds after files change."""

    #: every path looked at, present or not, in first-seen order (tree-relative)
    paths: dict[str, None] = field(default_factory=dict)
    #: every warning raised meanwhile, repeats included (the tree says each once)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: files of which only a class was parsed: (start, length) of that class's text
    partly: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: files parsed whole (or tried)
    whole: dict[str, None] = field(default_factory=dict)
    #: the views of each file read (see :mod:`.views`): what of its text mattered
    views: dict[str, set[View]] = field(default_factory=dict)


class ReadLog:
    """The recordings under way in the trees that share their parsing (one tree, or
    the trees of one lineage: :meth:`RecordedReads.share_parsing` and
    :meth:`~RecordedReads.reuse_parsing`). A piece of text is shared by those trees,
    so a read of it through any of them counts for each recording."""

    __slots__ = ("recordings",)

    def __init__(self) -> None:
        self.recordings: list[Recording] = []

    def note(self, path: str, view: View) -> None:
        """The work under way read this view of the file ``path``."""
        for record in self.recordings:
            record.views.setdefault(path, set()).add(view)


class RecordedReads:
    """Recording what work read, and sharing parsing (the base of ``SourceTree``,
    which reads the files)."""

    _recordings: list[Recording]
    #: where reads are noted (each tree makes one; trees sharing parsing share it)
    read_log: ReadLog
    _reads: dict[str, bytes]
    _texts: dict[str, str | None]
    _modules: dict[str, ast.Module | None]
    _chunks: dict[str, list[Any] | None]
    _wholes: dict[str, ast.Module]
    #: the class names of each file asked for a class (:meth:`has_class`)
    _class_names: dict[str, set[str]]
    indexes: dict[str, Any]

    def _text(self, rel: str) -> str | None:
        raise NotImplementedError

    # -- recording what a piece of work read -----------------------------
    @contextmanager
    def recording(self) -> Iterator[Recording]:
        """Record every path the work inside the ``with`` looks at and every warning
        it raises, cached reads included: the result of that work depends on these
        files only (a cache keeps it while they are unchanged)."""
        record = Recording()
        log = self.read_log
        self._recordings.append(record)
        log.recordings.append(record)  # pieces read through any tree sharing them note there
        try:
            yield record
        finally:
            self._recordings.remove(record)
            log.recordings.remove(record)

    def replay(self, record: Recording) -> None:
        """What ``record`` read counts for the recordings under way too (a result
        computed once and kept by a caller, e.g. a memo, is used again)."""
        for active in self._recordings:
            active.paths.update(record.paths)
            for rel, views in record.views.items():
                active.views.setdefault(rel, set()).update(views)

    def share_parsing(self, other: RecordedReads) -> None:
        """Read bytes and cut files into statements once for two trees of one root
        (the page reader's and the evaluator's keep their own warnings and files)."""
        self._reads = other._reads
        self._chunks = other._chunks
        self._wholes = other._wholes
        self.indexes = other.indexes
        self.read_log = other.read_log  # the pieces note their reads there

    def reuse_parsing(self, other: RecordedReads, changed: Collection[str]) -> None:
        """Start from what ``other`` (the same root, read before an edit) parsed: its
        whole-file syntax trees, statement pieces and the evaluator's indexes, except
        those of the ``changed`` files. Each depends on its file's text alone, so the
        caller lists every file whose text differs. Files are still read, decoded and
        recorded here as usual (their warnings included); only the parsing is skipped."""
        self._wholes = {k: v for k, v in other._wholes.items() if k not in changed}
        self._chunks = {k: v for k, v in other._chunks.items() if k not in changed}
        self.indexes = {k: v for k, v in other.indexes.items() if k not in changed}
        self.read_log = other.read_log  # the pieces carried over note their reads there

    def _touch(self, rel: str) -> None:
        for record in self._recordings:
            record.paths.setdefault(rel)

    def search(self, rel: str, pattern: str) -> bool:
        """Whether ``pattern`` (a regular expression, ``re.M``) occurs in the file:
        the result rests on that alone, not on the rest of the text."""
        self.read_log.note(rel, ("search", pattern))
        text = self._text(rel)
        return text is not None and re.search(pattern, text, re.M) is not None

    def has_class(self, rel: str, name: str) -> bool:
        """Whether ``class NAME`` occurs in the file (the result rests on that alone)."""
        self.read_log.note(rel, ("has-class", name))
        text = self._text(rel) or ""
        if not (is_word(name) and name in text):
            return has_class(text, name)
        names = self._class_names.get(rel)
        if names is None:
            names = self._class_names[rel] = class_names(text)
        return name in names

    def read_text_matches(self, word: str, pattern: str) -> bool:
        """Whether a file read so far holds ``word`` where ``pattern`` (``re.M``)
        matches; only the files tried up to the first that does count."""
        for rel, text in list(self._texts.items()):
            self.read_log.note(rel, ("search", pattern))
            if not text or word not in text:
                continue
            fast = pattern == import_pattern(word)
            if _imports(text, word) if fast else re.search(pattern, text, re.M):
                return True
        return False

    def read_bytes(self) -> dict[str, bytes]:
        """The raw bytes of every file read so far, by path."""
        return dict(self._reads)
