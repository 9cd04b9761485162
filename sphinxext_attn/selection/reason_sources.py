"""Where vLLM states a rejection reason: the string literal, file and line.

vLLM's reasons are literals or f-strings appended in ``validate_configuration``
and friends, in the backend's class or one of its bases. The literal is found
by its text (an f-string by its constant parts, in order) in the modules of
the class's resolution order, nearest class first, then in the other modules
the evaluation read (helpers that return a reason). Only the top-level
statements (and, of a large class, the members) whose text holds the reason's
longest word are parsed, reusing what the evaluation already parsed.
"""

from __future__ import annotations

import ast
import bisect
import re

from sphinxext_attn.model.records import Location
from sphinxext_attn.pyeval import Interpreter, LazyBody, PyClass, Raised, Unknown, class_mro
from sphinxext_attn.runtime.profile import resolve_class
from sphinxext_attn.source.chunks import ChunkError
from sphinxext_attn.source.registry import read_registry
from sphinxext_attn.vocab.paths import BACKEND_BASE_FILE, CUDA_PLATFORM_FILE

#: Modules the selection runs in, searched after the backend's own classes.
SELECTION_FILES = (CUDA_PLATFORM_FILE, BACKEND_BASE_FILE)
MAX_PATTERN = 2000
#: an f-string with fewer literal characters says too little to be recognised
MIN_FIXED = 12
#: the reason's longest words tried in turn (one may be an interpolated value)
WORDS_TRIED = 3


def _pattern(node: ast.JoinedStr) -> re.Pattern[str] | None:
    parts: list[str] = []
    for value in node.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            parts.append(re.escape(value.value))
        else:
            parts.append(".*?")
    text = "".join(parts)
    fixed = sum(len(str(v.value)) for v in node.values if isinstance(v, ast.Constant))
    if len(text) > MAX_PATTERN or fixed < MIN_FIXED:
        return None
    return re.compile(text, re.DOTALL)


class ReasonLocator:
    """Finds the literal behind a reason; file indexes are built once each."""

    def __init__(self, interp: Interpreter) -> None:
        self.interp = interp
        self._entries = {e.name: e for e in read_registry(interp.tree)}
        #: (path, word) -> the literals of the statements holding the word
        self._files: dict[
            tuple[str, str], tuple[dict[str, int], list[tuple[re.Pattern[str], int]]]
        ] = {}
        self._classes: dict[str, list[str]] = {}
        #: (backend, reason) -> where: reasons repeat across configurations
        self._found: dict[tuple[str, str], Location | None] = {}

    def _index(
        self, path: str, word: str
    ) -> tuple[dict[str, int], list[tuple[re.Pattern[str], int]]]:
        """The literals (exact texts, f-string patterns) of ``path`` on the
        lines holding ``word``."""
        key = (path, word)
        if key not in self._files:
            lines = self.interp.tree.lines(path)
            holding = [i for i, line in enumerate(lines, 1) if word in line]
            self._files[key] = _literals(self._statements(path, word), holding)
        return self._files[key]

    def _statements(self, path: str, word: str) -> list[ast.stmt]:
        """The statements of ``path`` whose text holds ``word``: top-level pieces,
        members of a class the evaluation cut lazily; the whole file if a piece
        does not parse alone."""
        tree = self.interp.tree
        whole = tree.parsed(path)
        chunks = tree.chunks(path) if whole is None else None
        if chunks is None:
            module = whole or tree.parse(path)
            return list(module.body) if module is not None else []
        found: list[ast.stmt] = []
        try:
            for chunk in chunks:
                if word not in chunk.text:
                    continue
                lazy = chunk.lazy
                if lazy and isinstance(lazy.body, LazyBody) and not chunk.parsed:
                    found.extend(lazy.body.holding(word))
                else:
                    found.extend(chunk.nodes())
        except (ChunkError, Unknown):
            module = tree.parse(path)
            return list(module.body) if module is not None else []
        return found

    def _paths(self, backend: str) -> list[str]:
        if backend not in self._classes:
            paths: list[str] = []
            entry = self._entries.get(backend)
            cls = resolve_class(self.interp, entry) if entry is not None else None
            if cls is not None:
                try:
                    with self.interp.guarded():
                        mro = class_mro(cls, self.interp)
                except (Unknown, Raised):
                    mro = [cls]
                paths = [k.path for k in mro if isinstance(k, PyClass)]
            self._classes[backend] = list(dict.fromkeys([*paths, *SELECTION_FILES]))
        return self._classes[backend]

    def locate(self, backend: str, reason: str) -> Location | None:
        """The first literal whose text gives ``reason``: exact before f-string,
        the backend's modules before the others the evaluation read."""
        key = (backend, reason)
        if key not in self._found:
            self._found[key] = self._search(backend, reason)
        return self._found[key]

    def _search(self, backend: str, reason: str) -> Location | None:
        paths = list(dict.fromkeys([*self._paths(backend), *self.interp.tree.files]))
        # a plain literal is found in the text, without parsing the file
        for path in paths:
            text = self.interp.tree.text(path) or ""
            for quote in ('"', "'"):
                at = text.find(f"{quote}{reason}{quote}")
                if at >= 0:
                    return Location(path, text.count("\n", 0, at) + 1)
        # an f-string (or a literal written with escapes): parse the statements
        # holding one of the reason's longest words (a word may be interpolated)
        words = sorted(set(re.findall(r"[A-Za-z_][A-Za-z0-9_]{3,}", reason)), key=len)
        words = words[::-1][:WORDS_TRIED] or [""]
        for path in paths:  # nearest class first: stop at the first file that has it
            text = self.interp.tree.text(path) or ""
            for word in (w for w in words if w in text):
                exact, patterns = self._index(path, word)
                if reason in exact:
                    return Location(path, exact[reason])
                for pattern, line in patterns:
                    if pattern.fullmatch(reason):
                        return Location(path, line)
        return None


def _literals(
    statements: list[ast.stmt], lines: list[int]
) -> tuple[dict[str, int], list[tuple[re.Pattern[str], int]]]:
    """String literals and f-strings of ``statements`` that span one of ``lines``
    (sorted); subtrees elsewhere are not walked."""
    exact: dict[str, int] = {}
    patterns: list[tuple[re.Pattern[str], int]] = []
    stack: list[ast.AST] = list(statements)
    while stack:
        node = stack.pop()
        start = getattr(node, "lineno", None)
        if start is not None:
            end = getattr(node, "end_lineno", None) or start
            at = bisect.bisect_left(lines, start)
            if at == len(lines) or lines[at] > end:
                continue  # no line of this node holds the word
        if isinstance(node, ast.JoinedStr):
            pattern = _pattern(node)
            if pattern is not None:
                patterns.append((pattern, node.lineno))
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, str) and node.lineno < exact.get(node.value, 1 << 30):
                exact[node.value] = node.lineno  # the first in the file
        else:
            stack.extend(ast.iter_child_nodes(node))
    patterns.sort(key=lambda found: found[1])
    return exact, patterns


__all__ = ["ReasonLocator"]
