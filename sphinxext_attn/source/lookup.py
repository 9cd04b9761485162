"""Find a class, or the import of a name, in a tree file cheaply.

The page rules that follow a class's bases (the impl class for DCP, the
backend interface for ``:columns:``) only need the statements that mention a
name: the file's top-level statements are searched as text and only those
are parsed (:mod:`.source.chunks`), unless the file was parsed whole already.
Anything a piece cannot answer alone falls back to parsing the whole file.
"""

from __future__ import annotations

import ast
import re
from collections import deque
from collections.abc import Callable, Iterator

from sphinxext_attn.source.chunks import (
    ChunkError,
    has_class,
    is_word,
    word_boundary,
)
from sphinxext_attn.source.classes import absolute_module
from sphinxext_attn.source.tree import SourceTree


def _statements(
    tree: SourceTree, path: str, word: str, wanted: Callable[[str], object]
) -> Iterator[list[ast.stmt]]:
    """Top-level statements of ``path`` whose text is ``wanted``, a piece at a time
    (only a piece holding ``word`` is: the result rests on those alone)."""
    whole = tree.parsed(path)
    if whole is None:
        chunks = tree.chunks(path)
        if chunks is None:
            return
        tree.read_log.note(path, ("mention", word))
        try:
            found = [c.nodes() for c in chunks if word in c.unnoted() and wanted(c.unnoted())]
        except ChunkError:
            whole = tree.parse(path)
        else:
            yield from found
            return
    if whole is not None:
        yield whole.body


_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError)

#: a class header after its decorators: the name is compared with the one asked for
#: (no pattern compiled per name: each costs more than the search)
_HEADER = re.compile(r"(?:@.*\n\s*)*class\s+(\w+)")


def _starts_class(text: str, name: str) -> bool:
    """``re.match(rf"(?:@.*\\n\\s*)*class\\s+{re.escape(name)}\\b", text)``, as a bool."""
    if not is_word(name):
        return re.match(rf"(?:@.*\n\s*)*class\s+{re.escape(name)}\b", text) is not None
    header = _HEADER.match(text)
    return header is not None and header.group(1) == name


def word_in(text: str, name: str) -> bool:
    """``re.search(rf"\\b{re.escape(name)}\\b", text)``, as a bool."""
    if not is_word(name):
        return re.search(rf"\b{re.escape(name)}\b", text) is not None
    at = text.find(name)
    while at >= 0:
        if word_boundary(text, at) and word_boundary(text, at + len(name)):
            return True
        at = text.find(name, at + 1)
    return False


def _header_only(
    tree: SourceTree, path: str, name: str, needing: str | None
) -> ast.ClassDef | None:
    """A top-level class read in part: its header (bases) and, with ``needing``, only
    the body statements that start with that word (a big impl class need not be
    parsed to read one attribute). None when the text does not allow it."""
    if tree.parsed(path) is not None:
        return None
    chunks = tree.chunks(path) or []
    tree.read_log.note(path, ("mention", name))
    # only a piece that starts a class (or its decorators) can match: test that first
    found = [
        c
        for c in chunks
        if c.unnoted().startswith(("class", "@"))
        and name in c.unnoted()
        and _starts_class(c.unnoted(), name)
    ]
    if len(found) != 1:
        return None
    text, first_line = found[0].text, found[0].line
    start = text.index("class")
    depth, end = 0, -1
    for i in range(start, len(text)):
        depth += text[i] in "([{"
        depth -= text[i] in ")]}"
        if text[i] == ":" and depth == 0:
            end = i + 1
            break
    try:
        node = ast.parse(text[start:end] + " pass\n").body[0] if end > 0 else None
    except _PARSE_ERRORS:
        return None
    if not isinstance(node, ast.ClassDef) or node.name != name:
        return None
    header_line = first_line + text.count("\n", 0, start)
    ast.increment_lineno(node, header_line - 1)
    if needing is None or needing not in text:
        return node
    body = text[end:]
    indent = re.search(r"^([ \t]+)[^\s#]", body, re.M)
    if indent is None:
        return None
    statements: list[ast.stmt] = []
    for match in re.finditer(rf"^{indent.group(1)}{re.escape(needing)}\b.*$", body, re.M):
        try:
            parsed = ast.parse(match.group(0).strip())
        except _PARSE_ERRORS:
            return None  # a statement over several lines: read the whole class
        line = first_line + text.count("\n", 0, end + match.start())
        for stmt in parsed.body:
            ast.increment_lineno(stmt, line - 1)
            statements.append(stmt)
    node.body = statements or node.body
    return node


def find_class(
    tree: SourceTree, path: str, name: str, needing: str | None = None, header: bool = False
) -> ast.ClassDef | None:
    """A class of that name anywhere in the file (a top-level one first). With
    ``needing``, a class whose text lacks that word may come back as its header
    only; with ``header``, any top-level one does (callers then want its bases)."""
    memo = tree.classes_found
    key = (path, name, needing, header)
    if key in memo:
        found, read = memo[key]
        tree.replay(read)  # what finding it read counts for the work under way
        return found
    with tree.recording() as read:
        named = tree.has_class(path, name)
        found = _find_class(tree, path, name, needing, header) if named else None
    memo[key] = (found, read)
    return found


def _find_class(
    tree: SourceTree, path: str, name: str, needing: str | None, header: bool
) -> ast.ClassDef | None:
    if needing is not None or header:
        found = _header_only(tree, path, name, needing)
        if found is not None:
            return found
    segment = tree.class_segment(path, name)
    if segment is not None:
        return segment
    pieces = list(_statements(tree, path, name, lambda text: has_class(text, name)))
    for body in pieces:  # top level first, as a walk of the whole module finds it
        for node in body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return node
    for body in pieces:
        for stmt in body:
            for inner in ast.walk(stmt):
                if isinstance(inner, ast.ClassDef) and inner.name == name:
                    return inner
    return None


def statements_walk(stmt: ast.stmt | ast.Module) -> Iterator[ast.AST]:
    """``ast.walk(stmt)`` without expressions (they hold no statements): the same
    statements, in the same breadth-first order, at a fraction of the nodes."""
    todo: deque[ast.AST] = deque([stmt])
    while todo:
        node = todo.popleft()
        yield node
        for field in _STATEMENT_FIELDS:
            children = getattr(node, field, None)
            if isinstance(children, list):
                todo.extend(c for c in children if isinstance(c, _HOLDERS))


#: the fields of a node that hold statements or blocks of them, in ``_fields`` order
_STATEMENT_FIELDS = ("body", "handlers", "orelse", "finalbody", "cases")
_HOLDERS = (ast.stmt, ast.ExceptHandler, ast.match_case)


def _from_imports(body: list[ast.stmt], path: str, name: str) -> Iterator[tuple[str, str]]:
    for stmt in body:
        for node in statements_walk(stmt):
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        dotted = absolute_module(path, node.module, node.level)
                        if dotted:
                            yield dotted, alias.name


def imports_of(tree: SourceTree, path: str, name: str) -> Iterator[tuple[str, str]]:
    """``(dotted module, original name)`` of each ``from X import name`` in ``path``:
    module-level imports first (also in ``if``/``try`` blocks), then those inside
    functions and classes, whose statements are parsed only if still asked for."""
    block = re.compile(r"(?:from|import|if|try)\b")
    for module_level in (True, False):

        def wanted(text: str, first: bool = module_level) -> bool:
            matched = bool(block.match(text)) == first and "import" in text and name in text
            return matched and word_in(text, name)

        for body in _statements(tree, path, name, wanted):
            yield from _from_imports(body, path, name)
