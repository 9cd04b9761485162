"""Cutting a module into top-level pieces (core/pyeval/chunks): where the cuts
fall, and that a piece built across a dropped cut is checked."""

from __future__ import annotations

import ast

import pytest

from sphinxext_attn.core.pyeval.chunks import ChunkError, chunk_names, split_chunks

DOCSTRING_AT_COLUMN_0 = '''"""A module.

This text starts at column 0
x = 1 looks like code
"""

import os


class A:
    """Docs.

Also at column 0.
"""

    value = 1


def f():
    return 2
'''


def test_cuts_skip_triple_quoted_text() -> None:
    chunks = split_chunks(DOCSTRING_AT_COLUMN_0, "m.py")
    heads = [c.text.splitlines()[0] for c in chunks]
    assert heads == ['"""A module.', "import os", "class A:", "def f():"]
    names = [chunk_names(c) for c in chunks]
    assert names == [[], None, ["A"], ["f"]]
    whole = ast.parse(DOCSTRING_AT_COLUMN_0)
    for chunk, node in zip(chunks, whole.body, strict=True):
        (parsed,) = chunk.nodes()
        assert ast.dump(parsed, include_attributes=True) == ast.dump(node, include_attributes=True)


def test_a_merged_piece_must_be_one_statement() -> None:
    # a triple quote inside a comment pairs with the docstring's: the pieces
    # between are merged, which parse as more than one statement
    text = "# a stray ''' quote\nx = 1\ny = '''\ntext\n'''\n"
    chunks = split_chunks(text, "m.py")
    merged = [c for c in chunks if c.merged]
    assert merged
    with pytest.raises(ChunkError):
        for chunk in merged:
            chunk.nodes()
