"""Parse a module one top-level statement at a time, only the statements asked for.

A helper module such as ``vllm/envs.py`` or ``flashinfer.py`` is mostly code
no question needs. Its text is cut at lines that start a top-level statement;
each piece's bound names are read from its first line, and the piece is
parsed the first time one of them is looked up. ``import``, ``if``, ``try``
and ``with`` pieces are parsed at once (they are short and bind several
names). If any piece does not parse alone (a string spanning a cut), the
whole file is parsed instead, so the answer never depends on the shortcut.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from sphinxext_attn.core.source import parse_quietly

_TOP = re.compile(r"^(?=[^\s#)\]}])", re.M)
_CONTINUES = re.compile(r"(else|elif|except|finally)\b")
_DEF = re.compile(r"(?:async\s+)?def\s+(\w+)|class\s+(\w+)")
_ASSIGN = re.compile(r"(\w+)\s*(?::[^=\n]*)?=(?!=)")
_EAGER = re.compile(r"(import|from|if|try|with|for|while)\b")


class ChunkError(Exception):
    """A piece did not parse alone: parse the whole file."""


@dataclass(eq=False)
class Chunk:
    """One top-level statement's text, parsed on first use."""

    path: str
    line: int
    text: str
    #: character offset of the piece in the file
    start: int = 0
    _nodes: list[ast.stmt] | None = None

    def nodes(self) -> list[ast.stmt]:
        if self._nodes is None:
            try:
                # blank lines ahead put the piece at its place in the file (cheaper
                # than renumbering every node with ast.increment_lineno)
                module = parse_quietly("\n" * (self.line - 1) + self.text, self.path)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                raise ChunkError(self.path) from None
            self._nodes = module.body
        return self._nodes


def split_chunks(text: str, path: str) -> list[Chunk]:
    """Top-level statements of ``text`` (decorators kept with their ``def``)."""
    starts = [m.start() for m in _TOP.finditer(text)]
    pieces: list[tuple[int, int]] = []
    decorated = False  # the last piece is decorators still waiting for their def
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        head = text[start : start + 10]
        if pieces and (_CONTINUES.match(head) or decorated):
            pieces[-1] = (pieces[-1][0], end)
        else:
            pieces.append((start, end))
        decorated = head.startswith("@")
    return [
        Chunk(path, text.count("\n", 0, start) + 1, text[start:end], start)
        for start, end in pieces
    ]


def chunk_names(chunk: Chunk) -> list[str] | None:
    """Names a piece binds, from its first line; None when it must be parsed to tell."""
    head = chunk.text.lstrip("@")
    if chunk.text.startswith("@"):
        match = re.search(r"^(?:async\s+)?def\s+(\w+)|^class\s+(\w+)", chunk.text, re.M)
        return [match.group(1) or match.group(2)] if match else None
    if _EAGER.match(head):
        return None
    match = _DEF.match(head)
    if match:
        return [match.group(1) or match.group(2)]
    match = _ASSIGN.match(head)
    if match and "," not in head.split("=", 1)[0]:
        return [match.group(1)]
    if head.startswith(('"', "'", "__all__")) or re.match(r"[\w.]+\(", head):
        return []  # a docstring or a call: binds nothing a question reads
    return None
