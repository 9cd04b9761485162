"""Which release a tree is (shown in the JSON and used by source links)."""

from __future__ import annotations

import ast

from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.vocab.paths import VERSION_FILE


def read_version(tree: SourceTree) -> str | None:
    """The release a tree is, from the folder name ``vllm-X.Y.Z``; else, as in an
    installed distribution, the string literal ``vllm/_version.py`` assigns to
    ``__version__`` (read, never run)."""
    name = tree.root.name
    if name.startswith("vllm-") and name[5:6].isdigit():
        return name[5:]
    if not tree.exists(VERSION_FILE):
        return None
    module = tree.parse(VERSION_FILE)
    for node in module.body if module is not None else []:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    return None
