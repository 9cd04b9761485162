"""Parse a module one top-level statement at a time, only the statements asked for.

A helper module such as ``vllm/envs.py`` or ``flashinfer.py`` is mostly code
no question needs. Its text is cut at lines that start a top-level statement;
each piece's bound names are read from its first line (an ``import``'s from
its text), and the piece is parsed the first time one of them is looked up.
``if``, ``try`` and ``with`` pieces are parsed at once (they bind names in
blocks). Lines inside a triple-quoted string (a docstring whose text starts
at column 0) are not cuts. If any piece does not parse alone, or a piece whose
cuts were dropped is not exactly one statement, the whole file is parsed
instead, so the answer never depends on the shortcut.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sphinxext_attn.source.recording import ReadLog


def parse_quietly(text: str, filename: str) -> ast.Module:
    """``ast.parse`` without the analysed code's own SyntaxWarnings (invalid escapes and
    the like): they are not the user's concern, and under ``-W error`` they would turn
    a valid file into a syntax error."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text, filename=filename)


#: A line that starts a statement of the block, after the newline ending the one before
#: (a literal newline first: the regex engine can skip to each one quickly).
_NEXT_TOP = re.compile(r"\n(?=[^\s#)\]}])")
_CONTINUES = re.compile(r"(else|elif|except|finally)\b")
_DEF = re.compile(r"(?:async\s+)?def\s+(\w+)|class\s+(\w+)")
_ASSIGN = re.compile(r"(\w+)\s*(?::[^=\n]*)?=(?!=)")
#: after an assignment's first ``=``, another target's ``=`` (not one inside
#: brackets, a string or a comment, nor a comparison's)
_CHAINED = re.compile(r"[^=()\[\]{}'\"#]*(?<![=!<>])=(?!=)")
_EAGER = re.compile(r"(import|from|if|try|with|for|while)\b")
#: ``import a.b as c, d`` and ``from .x import (a, b as c)``: what follows ``import``
_IMPORT = re.compile(r"(?:from\s+\.*[\w.]*\s+)?import\s+(.*)", re.S)
_ALIAS = re.compile(r"([\w.]+)(?:\s+as\s+(\w+))?")
_QUOTES = ('"""', "'''")


def word_boundary(text: str, at: int) -> bool:
    """``\\b`` holds at ``at`` (no pattern compiled per class name: it costs more)."""
    before, after = text[at - 1 : at] if at else "", text[at : at + 1]
    return (before.isalnum() or before == "_") != (after.isalnum() or after == "_")


#: Classes smaller than this are parsed whole by the evaluator (cutting them into
#: members saves nothing, see ``pyeval/lazyclass.py``).
LAZY_CHARS = 4000


class ChunkError(Exception):
    """A piece did not parse alone: parse the whole file."""


@dataclass(eq=False)
class Chunk:
    """One top-level statement's text, parsed on first use. Reading its text (or
    nodes) notes the piece as read in its trees' :class:`~.recording.ReadLog`: a scan
    of many pieces that only needs those holding a word reads :meth:`unnoted` and
    notes a ``mention``."""

    path: str
    line: int
    _text: str
    #: character offset of the piece in the file
    start: int = 0
    #: cuts inside a triple-quoted string were dropped: must be one statement
    merged: bool = False
    _nodes: list[ast.stmt] | None = None
    #: the class statement with a lazy body (see lazyclass), False if not one
    lazy: Any = None
    #: the piece's place among the file's pieces (-1: a class member, read
    #: through its class's piece)
    index: int = -1
    #: the recordings of the trees that share this piece (None: a piece no tree
    #: made, e.g. of a text compared across an edit: its reads are not noted)
    log: ReadLog | None = None

    @property
    def text(self) -> str:
        log = self.log
        if log is not None and log.recordings and self.index >= 0:
            log.note(self.path, ("chunk", self.index))
        return self._text

    def unnoted(self) -> str:
        """The text, not noted as read (the caller notes what it depended on)."""
        return self._text

    @property
    def parsed(self) -> bool:
        return self._nodes is not None

    def nodes(self, noted: bool = True) -> list[ast.stmt]:
        log = self.log
        if noted and log is not None and log.recordings and self.index >= 0:
            log.note(self.path, ("chunk", self.index))
        if self._nodes is None:
            try:
                # blank lines ahead put the piece at its place in the file (cheaper
                # than renumbering every node with ast.increment_lineno)
                module = parse_quietly("\n" * (self.line - 1) + self._text, self.path)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                raise ChunkError(self.path) from None
            if self.merged and len(module.body) != 1:
                raise ChunkError(self.path)
            self._nodes = module.body
        return self._nodes


def split_chunks(text: str, path: str, log: ReadLog | None = None) -> list[Chunk]:
    """Top-level statements of ``text`` (decorators kept with their ``def``); reading
    one notes it in ``log`` (that of the trees sharing the pieces)."""
    chunks: list[Chunk] = []
    line, counted = 1, 0  # lines counted incrementally: one pass over the text
    for start, piece, merged in cut_pieces(text, ""):
        line += text.count("\n", counted, start)
        counted = start
        chunks.append(Chunk(path, line, piece, start, merged, index=len(chunks), log=log))
    return chunks


def cut_pieces(text: str, indent: str) -> list[tuple[int, str, bool]]:
    """``(offset, text, merged)`` of each statement of a block whose statements
    start with ``indent`` (``""`` for a module)."""
    line_start = rf"{re.escape(indent)}(?=[^\s#)\]}}])"
    cut = _NEXT_TOP if not indent else re.compile(rf"\n{line_start}")
    starts = [0] if re.match(line_start, text) else []
    starts += [m.start() + 1 for m in cut.finditer(text)]
    inside = _in_triple_strings(text, starts)
    pieces: list[tuple[int, int]] = []
    merged: set[int] = set()
    decorated = False  # the last piece is decorators still waiting for their def
    skip = len(indent)
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        head = text[start + skip : start + skip + 10]
        if pieces and start in inside:
            pieces[-1] = (pieces[-1][0], end)
            merged.add(len(pieces) - 1)
            continue
        if pieces and (_CONTINUES.match(head) or decorated):
            pieces[-1] = (pieces[-1][0], end)
        else:
            pieces.append((start, end))
        decorated = head.startswith("@")
    return [(start, text[start:end], i in merged) for i, (start, end) in enumerate(pieces)]


def triple_strings(text: str) -> list[tuple[int, int]]:
    """Each opening triple quote to the next of its kind (an unclosed one: to the
    end), left to right, as a lazy regular expression would pair them, by
    ``str.find`` (the expression's scan cost 4 times as much)."""
    spans: list[tuple[int, int]] = []
    at = 0
    ahead = {quote: text.find(quote) for quote in _QUOTES}  # the next of each kind
    while True:
        for quote, where in ahead.items():
            if 0 <= where < at:
                ahead[quote] = text.find(quote, at)
        found = [(where, quote) for quote, where in ahead.items() if where >= 0]
        if not found:
            return spans
        start, quote = min(found)
        close = text.find(quote, start + 3)
        at = close + 3 if close >= 0 else len(text)
        spans.append((start, at))


def _in_triple_strings(text: str, starts: list[int]) -> set[int]:
    """Cut positions that fall inside a triple-quoted string. Quotes are paired
    naively (one in a comment can mislead it): a piece built across a dropped cut
    must then parse as one statement, or the whole file is parsed."""
    spans = triple_strings(text)
    inside: set[int] = set()
    i = 0
    for begin, end in spans:
        while i < len(starts) and starts[i] <= begin:
            i += 1
        while i < len(starts) and starts[i] < end:
            inside.add(starts[i])
            i += 1
    return inside


def chunk_names(chunk: Chunk) -> list[str] | None:
    """Names a piece binds, from its first line; None when it must be parsed to tell
    (not noted as read: the file's outline, see :mod:`.views`, holds the answer)."""
    text = chunk.unnoted()
    head = text.lstrip("@")
    if text.startswith("@") and ":=" not in text:  # one may sit in a decorator
        match = re.search(r"^(?:async\s+)?def\s+(\w+)|^class\s+(\w+)", text, re.M)
        return [match.group(1) or match.group(2)] if match else None
    eager = _EAGER.match(head)
    if eager and eager.group(1) in ("import", "from") and ":=" not in text:
        return import_names(head)  # read, not parsed, until a name it binds is looked up
    if eager or ":=" in text:
        return None  # blocks, and ``:=`` (it binds a second name): parse to tell
    match = _DEF.match(head)
    if match:
        return [match.group(1) or match.group(2)]
    if ";" in head:
        return None  # a second statement may bind more: parse to tell
    match = _ASSIGN.match(head)
    if match and "," not in head.split("=", 1)[0]:
        # ``x = y = 1`` binds y too: parse to tell
        return None if _CHAINED.match(head, match.end()) else [match.group(1)]
    if head.startswith(('"', "'", "__all__")) or re.match(r"[\w.]+\(", head):
        return []  # a docstring or a call: binds nothing a question reads
    return None


def import_names(text: str) -> list[str] | None:
    """Names an ``import`` piece binds, as :func:`.bindings.bound_names` gives them;
    None for anything but one plain import statement (``*``, ``;``, a backslash)."""
    bare = re.sub(r"#[^\n]*", "", text).strip()
    match = _IMPORT.fullmatch(bare)
    if match is None or ";" in bare or "\\" in bare:
        return None
    plain = not bare.startswith("from")
    names = match.group(1)
    if not plain and names.startswith("(") and names.endswith(")"):
        names = names[1:-1]
    out = []
    for part in names.split(","):
        part = " ".join(part.split())
        alias = _ALIAS.fullmatch(part)
        if alias is None:
            if part or plain:
                return None
            continue  # a trailing comma inside the parentheses
        name, asname = alias.group(1), alias.group(2)
        if not plain and "." in name:
            return None
        out.append(asname or name.split(".")[0])
    return out or None


#: Text before a module's first piece that parsing the whole would skip: comment and
#: blank lines only.
_COMMENT_LINES = re.compile(r"(?:[ \t\f]*(?:#[^\n]*)?\n)*")


def assembled(chunks: list[Chunk], text: str) -> list[ast.stmt] | None:
    """The module's statements from its pieces, parsing only those not parsed yet:
    what parsing the whole text gives. None when a piece does not parse alone, the
    text before the first piece is not just comments, or a lone ``\\r`` ends a line
    (pieces count lines by ``\\n``): then the whole text is parsed."""
    first = chunks[0].start if chunks else len(text)
    if not chunks or "\r" in text or _COMMENT_LINES.fullmatch(text, 0, first) is None:
        return None
    try:
        return [node for chunk in chunks for node in chunk.nodes()]
    except ChunkError:
        return None


def fill_from(chunks: list[Chunk], body: list[ast.stmt]) -> None:
    """Give the pieces not parsed yet their statements from the module parsed whole,
    so that nothing is parsed twice. Only when each piece starts exactly where one
    of the statements starts (decorators included): each piece's text is then its
    statements' text, and parsing it alone would give them."""
    if not chunks or not body:
        return
    groups: list[list[ast.stmt]] = [[] for _ in chunks]
    lines = [chunk.line for chunk in chunks]
    k = -1
    for stmt in body:
        decorators = getattr(stmt, "decorator_list", None)
        line = min(d.lineno for d in decorators) if decorators else stmt.lineno
        while k + 1 < len(lines) and lines[k + 1] <= line:
            k += 1
            if lines[k] != line:
                return  # a piece that starts inside a statement
        if k < 0:
            return
        groups[k].append(stmt)
    if not all(groups):
        return
    for chunk, group in zip(chunks, groups, strict=True):
        if chunk._nodes is None and not (chunk.merged and len(group) != 1):
            chunk._nodes = group


def parse_module(text: str, path: str, chunks: list[Chunk] | None) -> ast.Module:
    """The whole module, as :func:`parse_quietly` gives it, reusing the pieces already
    parsed and giving the others their statements (raises as it does)."""
    body = assembled(chunks, text) if chunks and any(c.parsed for c in chunks) else None
    if body is not None:
        return ast.Module(body=body, type_ignores=[])
    module = parse_quietly(text, path)
    if chunks:
        fill_from(chunks, module.body)
    return module


#: ``class NAME``: the name is compared with the one asked for (no pattern compiled
#: per name: each costs more than the search)
_CLASS_AT = re.compile(r"class\s+(\w+)")
_WORD = re.compile(r"\w+\Z")


def is_word(name: str) -> bool:
    return _WORD.match(name) is not None


def class_names(text: str) -> set[str]:
    """Every ``NAME`` that ``class\\s+NAME\\b`` finds in ``text`` (for a word ``NAME``);
    a file is asked for several classes, so its owner keeps them (the tree per file,
    a file's views)."""
    names = set()
    at = text.find("class")
    while at >= 0:
        match = _CLASS_AT.match(text, at)
        if match is not None:
            names.add(match.group(1))
        at = text.find("class", at + 1)
    return names


def has_class(text: str, name: str) -> bool:
    """``re.search(rf"class\\s+{re.escape(name)}\\b", text)``, as a bool."""
    if is_word(name):
        return name in text and name in class_names(text)
    return re.search(rf"class\s+{re.escape(name)}\b", text) is not None
