"""Syntax checks of files the readers parse only in part.

A backend file is mostly other code: the readers parse only the class they
need, and the rest of the file is checked with ``symtable`` (CPython's parser
without building Python AST objects), so a broken file still gets its warning
at a fraction of the cost of parsing it all.
"""

from __future__ import annotations

import symtable
import warnings

#: A problem :meth:`SourceTree.check_partly_parsed` reports: the message and the line.
Problem = tuple[str, int]


def syntax_problems(rel: str, text: str) -> list[Problem]:
    """The problems of ``text`` (the file ``rel``) as CPython's parser finds them."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            symtable.symtable(text, rel, "exec")
    except (SyntaxError, RecursionError, MemoryError, ValueError) as exc:
        return [parse_problem(exc)]
    return []


def parse_problem(exc: Exception) -> Problem:
    """The warning for a file that does not parse: the message and the line."""
    if isinstance(exc, SyntaxError):
        return f"syntax error: {exc.msg}", exc.lineno or 0
    return f"cannot parse file: {type(exc).__name__}", 0


def without_segment(text: str, start: int, length: int) -> str:
    """``text`` with ``text[start:start + length]`` blanked out (its newlines kept,
    so reported lines stay true): the rest of a file whose class was parsed alone."""
    segment = text[start : start + length]
    return text[:start] + "\n" * segment.count("\n") + text[start + length :]
