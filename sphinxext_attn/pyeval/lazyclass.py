"""A class statement parsed one member at a time, only the members asked for.

An implementation class (``FlashAttentionImpl``, a metadata builder, the
engine config) is tens of kilobytes of methods, of which a question reads one
attribute. Its header (decorators, bases) is parsed alone; its body is cut
at lines that start a member, the way :mod:`.chunks` cuts a module, and each
member is parsed (inside a stand-in ``class _:`` so it keeps its lines and
columns) when a name it binds is looked up. The body is a :class:`LazyBody`:
a list that parses every member the first time it is read as a list, so code
walking ``node.body`` sees the whole class. Anything unexpected (a header
that does not end its line, a member that does not parse alone) parses the
whole class statement instead, so answers never depend on the shortcut.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from typing import TYPE_CHECKING, Any

from sphinxext_attn.pyeval.values import Unknown
from sphinxext_attn.source.chunks import (
    LAZY_CHARS,
    Chunk,
    ChunkError,
    chunk_names,
    cut_pieces,
    parse_quietly,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
#: a column past any statement's: "after line N" when no column is given
END_OF_LINE = 1 << 30


def position(node: ast.stmt) -> tuple[int, int]:
    """Where a statement starts: statements on one line (``;``) run in this order."""
    return node.lineno, node.col_offset


class LazyBody(list):  # type: ignore[type-arg]
    """The statements of a class body, parsed member by member on demand."""

    def __init__(
        self, chunk: Chunk, members: list[Chunk], fallback: Callable[[], ast.ClassDef | None]
    ) -> None:
        super().__init__()
        self.chunk = chunk
        self.fallback = fallback
        self.members = members
        self.loaded = False
        self._parsed: dict[int, list[ast.stmt]] = {}
        self._index: dict[str, list[int]] | None = None

    # -- reading as a list loads every member ------------------------------------
    def _load(self) -> None:
        if not self.loaded:
            try:
                nodes = [n for i in range(len(self.members)) for n in self._member(i)]
            except ChunkError:
                return self._whole()
            list.extend(self, nodes)
            self.loaded = True

    def _whole(self) -> None:
        """A member did not parse alone: the class statement, parsed whole."""
        try:
            classes = [n for n in self.chunk.nodes() if isinstance(n, ast.ClassDef)]
        except ChunkError:
            classes = []  # the piece itself was cut wrong: the file, parsed whole
        whole = classes[0] if len(classes) == 1 else self.fallback()
        if whole is None:
            raise Unknown("class cannot be parsed", self.chunk.path, self.chunk.line)
        list.clear(self)
        list.extend(self, whole.body)
        self.loaded = True

    def __iter__(self) -> Iterator[ast.stmt]:
        self._load()
        return list.__iter__(self)

    def __len__(self) -> int:
        self._load()
        return list.__len__(self)

    def __getitem__(self, index: Any) -> Any:  # (list's two overloads: int and slice)
        self._load()
        return list.__getitem__(self, index)

    def __reversed__(self) -> Iterator[ast.stmt]:
        self._load()
        return list.__reversed__(self)

    def __bool__(self) -> bool:
        return bool(self.members) or list.__len__(self) > 0

    # -- by name --------------------------------------------------------------------
    def _member(self, i: int) -> list[ast.stmt]:
        nodes = self._parsed.get(i)
        if nodes is None:
            member = self.members[i]
            text = "\n" * (member.line - 2) + "class _:\n" + member.text
            try:
                module = parse_quietly(text, member.path)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                raise ChunkError(member.path) from None
            cls = module.body[0]
            assert isinstance(cls, ast.ClassDef)
            nodes = cls.body
            if member.merged and len(nodes) != 1:
                raise ChunkError(member.path)
            self._parsed[i] = nodes
        return nodes

    def holding(self, text: str) -> list[ast.stmt]:
        """The parsed members whose source contains ``text`` (a reason's word)."""
        if self.loaded:
            return list(list.__iter__(self))
        try:
            picks = [i for i, member in enumerate(self.members) if text in member.text]
            return [n for i in picks for n in self._member(i)]
        except ChunkError:
            self._whole()
            return list(list.__iter__(self))

    def run_after(self, line: int, text: str, col: int = END_OF_LINE) -> list[ast.stmt]:
        """Parsed members that run with the class body after ``line`` (after column
        ``col`` of it, when given: ``items = []; items.append(1)``) and whose source
        holds ``text`` (functions are skipped unparsed: they run later)."""
        after = (line, col)
        if self.loaded:
            nodes = list(list.__iter__(self))
            return [n for n in nodes if position(n) > after and not isinstance(n, _DEFS)]
        try:
            return [
                node
                for i, member in enumerate(self.members)
                if (member.line >= line or member.merged)  # merged: may run on past it
                and text in member.text
                and not member.text.lstrip().startswith(("def ", "async def ", "@"))
                for node in self._member(i)
                if position(node) > after
            ]
        except ChunkError:
            self._whole()
            return self.run_after(line, text, col)

    def statements(self, name: str) -> list[ast.stmt]:
        """In source order, the statements that may bind or annotate ``name``."""
        if self.loaded:
            return list(list.__iter__(self))
        if self._index is None:
            index: dict[str, list[int]] = {}
            for i, member in enumerate(self.members):
                # a merged member may hold more than its first statement: any name
                names = None if member.merged else _member_names(member.text.lstrip(" \t"))
                for found in names if names is not None else ["*"]:
                    index.setdefault(found, []).append(i)
            self._index = index
        picks = sorted({*self._index.get(name, []), *self._index.get("*", [])})
        try:
            return [n for i in picks for n in self._member(i)]
        except ChunkError:
            self._whole()
            return list(list.__iter__(self))


def _member_names(head: str) -> list[str] | None:
    """Names a member binds, from its first line (decorated: its ``def``)."""
    if head.startswith("@"):
        found = re.search(r"^[ \t]*(?:async\s+)?def\s+(\w+)|^[ \t]*class\s+(\w+)", head, re.M)
        return [found.group(1) or found.group(2)] if found else None
    return chunk_names(Chunk("", 0, head))


def lazy_class(
    chunk: Chunk, fallback: Callable[[], ast.ClassDef | None] = lambda: None
) -> ast.ClassDef | None:
    """The class statement of ``chunk`` with a lazy body, or None (parse it whole)."""
    if len(chunk.text) < LAZY_CHARS:
        return None
    header_end = _header_end(chunk.text)
    if header_end is None:
        return None
    header, body = chunk.text[:header_end], chunk.text[header_end:]
    match = re.search(r"^([ \t]+)(?=[^\s#])", body, re.M)
    if match is None:
        return None
    indent = match.group(1)
    try:
        module = parse_quietly("\n" * (chunk.line - 1) + header + indent + "pass\n", chunk.path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if len(module.body) != 1 or not isinstance(module.body[0], ast.ClassDef):
        return None
    node = module.body[0]
    line, counted = chunk.line + header.count("\n"), 0
    members = []
    for start, piece, merged in cut_pieces(body, indent):
        line += body.count("\n", counted, start)  # counted on from the last member
        counted = start
        members.append(Chunk(chunk.path, line, piece, start, merged))
    node.body = LazyBody(chunk, members, fallback)
    node.end_lineno = chunk.line + chunk.text.rstrip("\n").count("\n")
    return node


def class_piece_names(chunk: Chunk) -> list[str] | None:
    """``[name]`` for a ``class`` piece whose every ``:=`` sits in its body (there
    it binds in the class or a method, never in the module); None otherwise (a
    ``:=`` in a decorator or a base binds in the module: parse to tell)."""
    if not chunk.text.startswith(("class ", "@")):
        return None
    end = _header_end(chunk.text)
    if end is None or ":=" in chunk.text[:end]:
        return None
    found = re.search(r"^class\s+(\w+)", chunk.text[:end], re.M)
    return [found.group(1)] if found else None


def _header_end(text: str) -> int | None:
    """Offset just past the line that ends a class header (decorators included),
    or None when the header is not alone on its lines."""
    depth = 0
    seen_class = False
    lines = text.splitlines(keepends=True)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NAME and tok.string == "class" and depth == 0:
                seen_class = True
            elif tok.type == tokenize.OP:
                if tok.string in "([{":
                    depth += 1
                elif tok.string in ")]}":
                    depth -= 1
                elif tok.string == ":" and depth == 0 and seen_class:
                    row, col = tok.end
                    rest = lines[row - 1][col:].strip()
                    if rest and not rest.startswith("#"):
                        return None  # a body on the header's line
                    return sum(len(line) for line in lines[:row])
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return None


def statements_for(node: ast.ClassDef, name: str) -> list[ast.stmt]:
    """The body statements of a class that may bind or annotate ``name``."""
    body = node.body
    return body.statements(name) if isinstance(body, LazyBody) else body


def class_of_chunk(
    chunk: Chunk, name: str, fallback: Callable[[], ast.ClassDef | None]
) -> ast.ClassDef | None:
    """``class name`` of a piece not yet parsed, with a lazy body; else None.
    ``fallback`` finds the class in the file parsed whole."""
    if chunk.parsed or not chunk.text.startswith(("class ", "@")):
        return None
    if chunk.lazy is None:
        found = re.search(r"^class\s+(\w+)", chunk.text, re.M)
        chunk.lazy = (found and found.group(1) == name and lazy_class(chunk, fallback)) or False
    return chunk.lazy or None
