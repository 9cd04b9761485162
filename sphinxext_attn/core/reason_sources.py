"""Where vLLM states a rejection reason: the string literal, file and line.

vLLM's reasons are literals or f-strings appended in ``validate_configuration``
and friends, in the backend's class or one of its bases. The literal is found
by its text (an f-string by its constant parts, in order) in the modules of
the class's resolution order, nearest class first, then in the other modules
the evaluation read (helpers that return a reason).
"""

from __future__ import annotations

import ast
import re

from sphinxext_attn.core.models import Location
from sphinxext_attn.core.pyeval import Interpreter, Raised, Unknown
from sphinxext_attn.core.pyeval.objects import class_mro
from sphinxext_attn.core.pyeval.values import PyClass
from sphinxext_attn.core.registry import read_registry
from sphinxext_attn.core.runtime import resolve_class

#: Modules the selection runs in, searched after the backend's own classes.
SELECTION_FILES = ("vllm/platforms/cuda.py", "vllm/v1/attention/backend.py")
MAX_PATTERN = 2000
#: an f-string with fewer literal characters says too little to be recognised
MIN_FIXED = 12


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
        self._files: dict[str, tuple[dict[str, int], list[tuple[re.Pattern[str], int]]]] = {}
        self._classes: dict[str, list[str]] = {}
        #: (backend, reason) -> where: reasons repeat across configurations
        self._found: dict[tuple[str, str], Location | None] = {}

    def _index(self, path: str) -> tuple[dict[str, int], list[tuple[re.Pattern[str], int]]]:
        if path not in self._files:
            exact: dict[str, int] = {}
            patterns: list[tuple[re.Pattern[str], int]] = []
            module = self.interp.tree.parse(path)
            if module is not None:
                for node in ast.walk(module):
                    if isinstance(node, ast.JoinedStr):
                        pattern = _pattern(node)
                        if pattern is not None:
                            patterns.append((pattern, node.lineno))
                    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                        exact.setdefault(node.value, node.lineno)
            self._files[path] = (exact, patterns)
        return self._files[path]

    def _paths(self, backend: str) -> list[str]:
        if backend not in self._classes:
            paths: list[str] = []
            entry = self._entries.get(backend)
            cls = resolve_class(self.interp, entry) if entry is not None else None
            if cls is not None:
                try:
                    mro = class_mro(cls, self.interp)
                except (Unknown, Raised, RecursionError):
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
        # an f-string (or a literal written with escapes): parse the files whose
        # text holds the reason's longest word
        words = re.findall(r"[A-Za-z_][A-Za-z0-9_]{3,}", reason)
        longest = max(words, key=len) if words else ""
        candidates = [p for p in paths if longest in (self.interp.tree.text(p) or "")]
        for path in candidates:  # nearest class first: stop at the first file that has it
            exact, patterns = self._index(path)
            if reason in exact:
                return Location(path, exact[reason])
            for pattern, line in patterns:
                if pattern.fullmatch(reason):
                    return Location(path, line)
        return None


__all__ = ["ReasonLocator"]
