"""Views of a file's text that a result rests on, compared across an edit.

While a piece of work runs (:meth:`SourceTree.recording`), each read of a file
notes which view of it was read:

- ``raw``: the text itself (its lines, a search of the whole text);
- ``code``: the text without the comment lines that end it (a syntax check that
  found nothing: appended comments cannot make it fail);
- ``ast``: its whole syntax tree, with every position (or its syntax error);
- ``outline``: its top-level statements' lines and the names each binds (what
  the evaluator's index of the module is built from; a statement whose names
  the first line does not tell is there whole);
- ``chunk``, *i*: the line and text of the *i*-th top-level statement (the
  evaluator read it, or a class of it);
- ``segment``, *i*: the same with its offset in the file (a class parsed alone:
  the rest of the file is syntax-checked around it);
- ``mention``, *word*: the statements whose text holds ``word`` (a scan that
  parses only those);
- ``search``, *pattern*: whether the pattern occurs in the text (``has-class``,
  *name*: whether ``class NAME`` does).

After an edit, :class:`Compare` computes the views a result read on the old and
the new text; if every one is equal, the result still holds (statements are
compared by text and line: answers carry line numbers for links). Appending a
comment changes the text, and the last statement's piece (the comment joins
it), nothing else: only results that read those are asked again.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Collection
from typing import Any

from sphinxext_attn.source.chunks import (
    LAZY_CHARS,
    Chunk,
    chunk_names,
    class_names,
    has_class,
    is_word,
    parse_quietly,
    split_chunks,
)
from sphinxext_attn.source.syntax_check import parse_problem

View = tuple[Any, ...]
RAW: View = ("raw",)
AST: View = ("ast",)
OUTLINE: View = ("outline",)
#: The text without the comment lines that end it: all a check that found no
#: syntax error rests on (see :func:`code_text`).
CODE: View = ("code",)


#: A line that may end a statement's piece without being part of the statement: blank,
#: or a comment without a quote or backslash (so it cannot close a string).
_TAIL_LINE = re.compile(r"[ \t]*(?:#[^'\"\\\n]*)?")


def statement_text(text: str) -> str:
    """A piece's text without its trailing blank and comment lines (a comment
    appended after a statement joins its piece, not the statement)."""
    lines = text.split("\n")
    end = len(lines)
    while end > 1 and _TAIL_LINE.fullmatch(lines[end - 1]):
        end -= 1
    return "\n".join(lines[:end])


#: A line that cannot change whether the text before it parses, when that text ends
#: outside any bracket or string and without a backslash: blank, or a comment
#: without a quote, a backslash or a carriage return (which CPython reads as a
#: line break: code could follow it).
_IGNORED_LINE = re.compile(r"[ \t\f]*(?:#[^'\"\\\r\x00]*)?")


def code_text(text: str) -> str:
    """``text`` without the blank and comment lines that end it. A text that parses
    ends outside any bracket or string, so this part parses too, and with any
    other such lines after it: appending a comment to a file that passed its
    syntax check leaves it passing. A last kept line ending with a backslash
    (which would join the next) keeps the whole text."""
    lines = text.split("\n")
    end = len(lines)
    while end > 1 and _IGNORED_LINE.fullmatch(lines[end - 1]):
        end -= 1
    kept = "\n".join(lines[:end])
    return text if kept.endswith("\\") else kept


def piece_view(chunk: Chunk) -> tuple[Any, ...]:
    """What readers of a piece take from it: its place, its statement's text, and
    what the evaluator tests on the whole text (``:=`` in it, its size: a large
    class is read member by member)."""
    text = chunk.unnoted()
    return (chunk.line, chunk.merged, statement_text(text), ":=" in text, len(text) < LAZY_CHARS)


def outline_entry(chunk: Chunk) -> tuple[Any, ...]:
    """What the module index takes from a piece: its place and the names it binds
    (a piece whose names its text must be parsed to tell: all of it)."""
    names = chunk_names(chunk)
    return (chunk.line, chunk.merged, tuple(names)) if names is not None else piece_view(chunk)


class FileViews:
    """The views of one text, each computed once."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self._chunks: list[Chunk] | None = None
        self._views: dict[View, Any] = {}
        self._class_names: set[str] | None = None

    def chunks(self) -> list[Chunk]:
        if self._chunks is None:
            self._chunks = split_chunks(self.text, self.path)
        return self._chunks

    def view(self, key: View) -> Any:
        if key not in self._views:
            self._views[key] = self._compute(key)
        return self._views[key]

    def _compute(self, key: View) -> Any:
        kind = key[0]
        if kind == "raw":
            return self.text
        if kind == "code":
            return code_text(self.text)
        if kind == "ast":
            try:
                module = parse_quietly(self.text, self.path)
            except (SyntaxError, RecursionError, MemoryError, ValueError) as exc:
                return ("error", parse_problem(exc))
            return ast.dump(module, include_attributes=True)
        if kind == "outline":
            return tuple(outline_entry(c) for c in self.chunks())
        if kind in ("chunk", "segment"):
            chunks = self.chunks()
            index = key[1]
            if not 0 <= index < len(chunks):
                return None
            chunk = chunks[index]
            if kind == "segment":  # the rest of the file is checked around it, as cut
                return (chunk.line, chunk.start, chunk.unnoted())
            return piece_view(chunk)
        if kind == "mention":
            word = key[1]
            return tuple((c.index, *piece_view(c)) for c in self.chunks() if word in c.unnoted())
        if kind == "has-class":
            name = key[1]
            if not (is_word(name) and name in self.text):
                return has_class(self.text, name)
            if self._class_names is None:
                self._class_names = class_names(self.text)
            return name in self._class_names
        if kind == "search":
            return re.search(key[1], self.text, re.M) is not None
        raise ValueError(f"unknown view {key!r}")  # a newer cache format: never equal


class Compare:
    """Files before and after an edit (texts by path, None when unreadable), their
    views compared on demand; :meth:`same` is True only when every view is equal."""

    def __init__(self, old: Callable[[str], str | None], new: Callable[[str], str | None]) -> None:
        self._old = old
        self._new = new
        self._files: dict[str, tuple[FileViews, FileViews] | None] = {}

    def _pair(self, rel: str) -> tuple[FileViews, FileViews] | None:
        if rel not in self._files:
            old, new = self._old(rel), self._new(rel)
            pair = None
            if old is not None and new is not None:  # unreadable: never the same
                pair = (FileViews(rel, old), FileViews(rel, new))
            self._files[rel] = pair
        return self._files[rel]

    def same(self, rel: str, views: Collection[View]) -> bool:
        """Whether every one of ``views`` of ``rel`` is unchanged by the edit (no
        views: only the file's presence was looked at, and it is still there)."""
        if not views:
            return True
        pair = self._pair(rel)
        if pair is None:
            return False
        old, new = pair
        if old.text == new.text:
            return True
        try:
            return all(old.view(key) == new.view(key) for key in _cheap_first(views))
        except (ValueError, TypeError, IndexError, RecursionError):
            return False


#: the order views are compared in, cheapest first (anything else last)
_COST = {"raw": 0, "code": 0, "outline": 1, "search": 2, "chunk": 3, "segment": 3, "mention": 4}


def _cheap_first(views: Collection[View]) -> list[View]:
    """``raw`` and ``outline`` settle most edits before a whole file is parsed."""
    return sorted(views, key=lambda v: (_COST.get(v[0], 5), repr(v)))
