"""Read and parse files of a vLLM tree safely: inside the root only, each file once.

Every read goes through :class:`SourceTree`, which is the single place that
enforces the fault model: paths are resolved strictly inside the root
(symlinks included), bytes are decoded as Python would (encoding cookies),
oversized or pathological files are refused, and each problem becomes a
:class:`~sphinxext_attn.model.records.Diagnostic` instead of an exception.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Collection, Iterable
from pathlib import Path, PurePosixPath
from typing import Any

from sphinxext_attn.model.plugin import Plugins
from sphinxext_attn.model.records import Diagnostic, Location
from sphinxext_attn.source.chunks import (
    ChunkError,
    fill_from,
    parse_module,
    split_chunks,
    word_boundary,
)
from sphinxext_attn.source.layout import PACKAGE, in_package, is_installed_layout
from sphinxext_attn.source.plugins import package_folders
from sphinxext_attn.source.recording import ReadLog, RecordedReads, Recording, decode_source
from sphinxext_attn.source.syntax_check import (
    Problem,
    parse_problem,
    syntax_problems,
    without_segment,
)
from sphinxext_attn.source.views import AST, CODE, OUTLINE, RAW

#: Files larger than this are not parsed (a backend file is a few hundred kB at most).
MAX_FILE_BYTES = 4 * 1024 * 1024


class SourceTree(RecordedReads):
    """A vLLM source tree (the folder holding ``vllm/``) read through one cache, with the
    ``plugins`` whoever makes it was given (none: vLLM's files alone)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        reads: dict[str, bytes] | None = None,
        *,
        plugins: Plugins = (),
    ) -> None:
        self.root = Path(os.path.realpath(root))
        self.plugins = plugins
        #: raw bytes by path, shared by the trees of one build (one open per file)
        self._reads: dict[str, bytes] = reads if reads is not None else {}
        self._modules: dict[str, ast.Module | None] = {}
        self._texts: dict[str, str | None] = {}
        #: files of which only a class was parsed -> the rest of their text
        self._partly: dict[str, str] = {}
        self._lines: dict[str, list[str]] = {}
        self.files: list[str] = []
        #: tree-relative folders of every file looked for, in first-seen order
        self._folders: dict[str, None] = {}
        self.diagnostics: list[Diagnostic] = []
        self._warned: set[tuple[str, str]] = set()
        #: the file being read or parsed (its warnings are kept for repeats)
        self._reading: str | None = None
        self._chunks: dict[str, list[Any] | None] = {}
        #: modules parsed whole, shared like the pieces (one parse for both trees), and
        #: those an earlier tree parsed of unchanged files (see reuse_parsing)
        self._wholes: dict[str, ast.Module] = {}
        #: the evaluator's index of each file's pieces (built from them alone)
        self.indexes: dict[str, Any] = {}
        #: tree-relative folder -> its real path (each folder resolved once)
        self._real_folders: dict[str, str] = {}
        #: a site-packages: only files under ``vllm/`` are the tree's
        self.installed = is_installed_layout(self.root)
        #: a plugin's top-level package -> its folder, the root its files are read in
        self.plugin_roots = package_folders(plugins)
        #: the recordings under way (nested work records into each)
        self._recordings: list[Recording] = []
        #: where reads are noted for the recordings (shared with the trees sharing parsing)
        self.read_log = ReadLog()
        #: warnings of a file's reading and parsing, repeated to later recordings
        self._file_warnings: dict[str, list[Diagnostic]] = {}
        #: what the layers above compute from this tree and keep with it (a machine's
        #: selector, by the machine): it goes when the tree goes
        self.derived: dict[tuple[str, str], object] = {}
        self._class_names: dict[str, set[str]] = {}
        #: (path, name, needing, header) -> the class found there (or None) and
        #: what finding it read (:func:`.lookup.find_class`)
        self.classes_found: dict[tuple[object, ...], tuple[ast.ClassDef | None, Recording]] = {}

    # -- diagnostics -----------------------------------------------------
    def warn(
        self,
        message: str,
        path: str | None = None,
        line: int = 0,
        subtype: str = "source",
        release: bool = False,
        backend: str = "",
    ) -> None:
        """Record a problem once (the same message for the same place is kept once)."""
        key = (f"{path}:{line}", message)
        loc = Location(path, line) if path else None
        diag = Diagnostic(message, loc, subtype, release, backend)
        for record in self._recordings:
            record.diagnostics.append(diag)
        if self._reading is not None:
            self._file_warnings.setdefault(self._reading, []).append(diag)
        if key in self._warned:
            return
        self._warned.add(key)
        self.diagnostics.append(diag)

    def _replay(self, rel: str) -> None:
        """A cached read or parse of ``rel``: its warnings count for the recordings."""
        self._touch(rel)
        for diag in self._file_warnings.get(rel, ()) if self._recordings else ():
            for record in self._recordings:
                record.diagnostics.append(diag)

    # -- paths -----------------------------------------------------------
    def safe_path(self, rel: str) -> Path | None:
        """The absolute path of ``rel`` if it stays inside the root, else None.

        ``rel`` must be relative, POSIX-style, without empty, ``.`` or ``..``
        segments; its real path (symlinks resolved) must lie inside the root.
        """
        if not rel or "\x00" in rel or "\\" in rel:
            return None
        pure = PurePosixPath(rel)
        if pure.is_absolute() or any(p in ("", ".", "..") for p in rel.split("/")):
            return None
        folder, _, name = rel.rpartition("/")
        base = self.root_of(rel)
        real_folder = self._real_folders.get(folder)
        if real_folder is None:
            real_folder = os.path.realpath(base.joinpath(*folder.split("/")))
            self._real_folders[folder] = real_folder
        # the folder is resolved; only the last part may still be a link
        joined = os.path.join(real_folder, name)
        real = os.path.realpath(joined) if os.path.islink(joined) else joined
        root = str(base)
        if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
            return None
        return Path(real)

    def root_of(self, rel: str) -> Path:
        """The root ``rel`` is read in: its plugin's folder for a plugin package."""
        return self.plugin_roots.get(rel.split("/", 1)[0], self.root)

    def owns(self, dotted: str) -> bool:
        """Whether module ``dotted`` is analysed: vLLM's package or a plugin's."""
        return in_package(dotted) or dotted.split(".", 1)[0] in self.plugin_roots

    def _looked_in(self, rel: str) -> None:
        """Remember the folder of every file looked for, present or not: a file
        added there later can change the tables (the Sphinx cache lists them)."""
        self._folders.setdefault(rel.rpartition("/")[0])

    @property
    def directories(self) -> list[str]:
        return list(self._folders)

    def note_directories(self, folders: list[str]) -> None:
        """Folders looked in on this tree's behalf (by a forked process)."""
        for folder in folders:
            self._folders.setdefault(folder)

    def first_present(self, homes: tuple[str, ...]) -> str | None:
        """The first of a file's ``homes`` (newest first) the tree has."""
        return next((rel for rel in homes if self.exists(rel)), None)

    def is_foreign(self, rel: str) -> bool:
        """A path beside ``vllm/`` in an installed layout: another distribution's
        file, treated as absent."""
        top = rel.split("/", 1)[0]
        return self.installed and top != PACKAGE and top not in self.plugin_roots

    def exists(self, rel: str) -> bool:
        self._touch(rel)
        if self.is_foreign(rel):
            return False
        path = self.safe_path(rel)
        if path is not None:
            self._looked_in(rel)
        return path is not None and path.is_file()

    def is_outside(self, rel: str) -> bool:
        """True when ``rel`` names something that resolves outside the root."""
        self._touch(rel)
        return self.safe_path(rel) is None

    @staticmethod
    def module_file_candidates(dotted: str) -> list[str]:
        """``a.b.c`` -> ``a/b/c.py`` and ``a/b/c/__init__.py`` (empty list if malformed)."""
        parts = dotted.split(".")
        if not dotted or any(not p.isidentifier() for p in parts):
            return []
        base = "/".join(parts)
        return [f"{base}.py", f"{base}/__init__.py"]

    def module_file(self, dotted: str) -> str | None:
        """The file of module ``dotted`` if it is in the analysed package (see
        :data:`PACKAGE`); None for any other module, as if it were not there."""
        if not self.owns(dotted):
            return None
        for rel in self.module_file_candidates(dotted):
            if self.exists(rel):
                return rel
        return None

    # -- reading ---------------------------------------------------------
    def text(self, rel: str) -> str | None:
        """Decoded text of a tree file, read at most once; None (with a warning) on
        failure. The result rests on the whole text (see :meth:`search`)."""
        self.read_log.note(rel, RAW)
        return self._text(rel)

    def _text(self, rel: str) -> str | None:
        if rel in self._texts:
            self._replay(rel)
            return self._texts[rel]
        self._touch(rel)
        self._reading = rel
        try:
            return self._read_text(rel)
        finally:
            self._reading = None

    def _read_text(self, rel: str) -> str | None:
        self._texts[rel] = None
        self._looked_in(rel)
        if self.is_foreign(rel):
            self.warn("not part of the installed vllm package; not read", rel, subtype="missing")
            return None
        path = self.safe_path(rel)
        if path is None:
            self.warn("path resolves outside the source tree; not read", rel, subtype="outside")
            return None
        try:
            size = path.stat().st_size
        except OSError:
            self.warn("file not found", rel, subtype="missing")
            return None
        if not path.is_file():
            self.warn("not a regular file", rel, subtype="missing")
            return None
        if size > MAX_FILE_BYTES:
            self.warn(f"file too large to analyse ({size} bytes)", rel, subtype="syntax")
            return None
        data = self._reads.get(rel)
        if data is None:
            try:
                with open(path, "rb") as fh:
                    data = fh.read(MAX_FILE_BYTES + 1)
            except OSError as exc:
                self.warn(f"cannot read file: {exc.strerror or exc}", rel, subtype="missing")
                return None
            self._reads[rel] = data
        self.files.append(rel)
        try:
            text = decode_source(data)
        except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
            line = (
                data[: getattr(exc, "start", 0)].count(b"\n") + 1
                if isinstance(exc, UnicodeDecodeError)
                else 0
            )
            self.warn(f"cannot decode file: {exc}", rel, line, subtype="decode")
            return None
        self._texts[rel] = text
        return text

    def lines(self, rel: str) -> list[str]:
        """Source lines of a file already read (comments carry a few facts)."""
        self._touch(rel)
        self.read_log.note(rel, RAW)
        if rel not in self._lines:
            text = self._texts.get(rel)
            self._lines[rel] = text.splitlines() if text else []
        return self._lines[rel]

    def class_segment(self, rel: str, name: str) -> ast.ClassDef | None:
        """Parse only the source of top-level ``class name`` (a backend file is mostly
        other code). None when the class is not found exactly once by its header or
        its text does not parse alone; callers then parse the whole module."""
        self._touch(rel)
        if rel in self._modules:
            return None
        chunks = self.chunks(rel)
        if chunks is None:
            return None
        head = f"class {name}"
        self.read_log.note(rel, ("mention", head))
        found = [
            c
            for c in chunks
            if c.unnoted().startswith(head) and word_boundary(c.unnoted(), len(head))
        ]
        if len(found) != 1:
            return None
        self.read_log.note(rel, ("segment", found[0].index))
        try:
            nodes = found[0].nodes()
        except ChunkError:
            return None
        if len(nodes) != 1 or not isinstance(nodes[0], ast.ClassDef):
            return None
        start, length = found[0].start, len(found[0].unnoted())
        # The rest of the file still needs a syntax check (the class blanked out).
        self._partly[rel] = without_segment(self._texts[rel] or "", start, length)
        for record in self._recordings:
            record.partly[rel] = (start, length)
        return nodes[0]

    def parsed(self, rel: str) -> ast.Module | None:
        """The whole-file AST if the file was already parsed whole, else None."""
        self._touch(rel)
        module = self._modules.get(rel)
        if module is not None:
            self.read_log.note(rel, AST)
        return module

    def chunks(self, rel: str) -> list[Any] | None:
        """The file cut into top-level statements, parsed one by one on demand."""
        self.read_log.note(rel, OUTLINE)
        text = self._text(rel)  # each tree keeps its own files and warnings
        if rel in self._chunks:
            return self._chunks[rel]
        chunks = self._chunks[rel] = (
            None if text is None else split_chunks(text, rel, self.read_log)
        )
        whole = self._wholes.get(rel)
        if chunks and whole is not None:  # its pieces need no parsing of their own
            fill_from(chunks, whole.body)
        return chunks

    def check_partly_parsed(self, clean: Collection[str] = ()) -> None:
        """Syntax-check files of which only a class was parsed.

        ``symtable`` runs CPython's parser without building Python AST objects,
        so a broken file still gets its warning (file and line) at a fraction of
        the cost of parsing it all; its class's row is kept, as read. ``clean``:
        files whose whole text passed the check (:meth:`clean_wholes`, in another
        process): their rest passes too, blanking a whole top-level statement
        leaves the code around it as valid as it was.
        """
        for rel, text in self._unchecked_rests():
            if rel in clean:
                continue
            for message, line in syntax_problems(rel, text):
                self.warn(message, rel, line, subtype="syntax")

    def clean_wholes(self, rels: Iterable[str]) -> frozenset[str]:
        """Those of ``rels`` whose whole text passes the syntax check (plain data:
        it crosses a process boundary)."""
        texts = ((rel, self._text(rel)) for rel in rels)
        return frozenset(
            rel for rel, text in texts if text is not None and not syntax_problems(rel, text)
        )

    def rest_problems(self, rel: str, start: int, length: int) -> list[Problem]:
        """The syntax problems of ``rel`` with ``text[start:start + length]`` (a class
        parsed alone) blanked out. The result rests on the whole text, or, when
        there are none, on the text without its trailing comments (see
        :func:`~sphinxext_attn.source.views.code_text`)."""
        text = self._text(rel)
        if text is None:
            return []
        problems = syntax_problems(rel, without_segment(text, start, length))
        self.read_log.note(rel, RAW if problems else CODE)
        return problems

    def _unchecked_rests(self) -> list[tuple[str, str]]:
        """The rest of each file only a class of was parsed (not parsed whole since)."""
        return [(r, t) for r, t in sorted(self._partly.items()) if r not in self._modules]

    def parse(self, rel: str) -> ast.Module | None:
        """The module AST of a tree file, parsed at most once; None (with a warning) on failure."""
        for record in self._recordings:
            record.whole.setdefault(rel)
        self.read_log.note(rel, AST)
        if rel in self._modules:
            self._replay(rel)
            return self._modules[rel]
        self._modules[rel] = None
        text = self._text(rel)
        if text is None:
            return None
        try:
            module = self._wholes.get(rel) or parse_module(text, rel, self._chunks.get(rel))
        except (SyntaxError, RecursionError, MemoryError, ValueError) as exc:
            message, line = parse_problem(exc)
            self._reading = rel
            try:
                self.warn(message, rel, line, subtype="syntax")
            finally:
                self._reading = None
            return None
        self._modules[rel] = self._wholes[rel] = module
        return module
