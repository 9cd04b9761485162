"""Cutting a module into top-level pieces (source/chunks): where the cuts
fall, and that a piece built across a dropped cut is checked."""

from __future__ import annotations

import ast
import re

import pytest

from sphinxext_attn.source.chunks import ChunkError, chunk_names, cut_pieces, split_chunks

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
    assert names == [[], ["os"], ["A"], ["f"]]
    whole = ast.parse(DOCSTRING_AT_COLUMN_0)
    for chunk, node in zip(chunks, whole.body, strict=True):
        (parsed,) = chunk.nodes()
        assert ast.dump(parsed, include_attributes=True) == ast.dump(node, include_attributes=True)


@pytest.mark.parametrize("indent", ["", "    ", "\t"])
@pytest.mark.parametrize(
    "text",
    [
        "",
        "x = 1\n",
        " x\ny\n",
        "#c\nx\n)\n]\n}\ny",
        "\x1cx\ny\n\u00a0z\n",  # whitespace to Python that is not ASCII
        "a\n\n    b\n\tc\n    # d\n    e",
        "    a\n    b\n  c\n      d\n    f(\n    )\n",
    ],
)
def test_cuts_are_the_lines_that_start_a_statement_of_the_block(text: str, indent: str) -> None:
    """Each cut is a line start (the text's or after a newline) where the block's
    indent is followed by a character that can start a statement."""
    starts = re.compile(rf"^{re.escape(indent)}(?=[^\s#)\]}}])", re.M)
    expected = [m.start() for m in starts.finditer(text)]
    pieces = cut_pieces(text, indent)
    assert [start for start, _, _ in pieces] == expected[: len(pieces)]
    assert len(pieces) == len(expected)  # no triple quotes here: no cut is dropped


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


LONG_CLASS = (
    "import os\n\n\n@decorate(\n    option=1,\n)\nclass Big(\n    Base,  # a comment\n"
    "    metaclass=Meta,\n):  # trailing\n"
    '    """Docs."""\n\n'
    "    value: int = 1\n    plain = 2\n    a, b = 3, 4\n\n"
    "    if os.name:\n        flag = True\n    else:\n        flag = False\n\n"
    "    @classmethod\n    def method(\n        cls,\n        x: int,\n    ) -> int:\n"
    '        """Text at column 0 follows.\n\nx = 1 is not a member\n"""\n'
    "        return x\n\n"
    "    async def later(self):\n        return 1\n\n"
    "    class Inner:\n        deep = 1\n\n"
    + "".join(f"    def f{i}(self):\n        return {i}\n\n" for i in range(300))
)


def test_lazy_class_body_equals_the_whole_parse() -> None:
    from sphinxext_attn.pyeval.lazyclass import LazyBody, lazy_class, statements_for

    (chunk,) = [c for c in split_chunks(LONG_CLASS, "m.py") if "class Big" in c.text]
    lazy = lazy_class(chunk)
    assert lazy is not None and isinstance(lazy.body, LazyBody)
    names = {
        name: [ast.unparse(s) for s in statements_for(lazy, name)]
        for name in ("method", "plain", "flag", "a", "Inner", "f7")
    }
    assert any(s.startswith("@classmethod\ndef method(") for s in names["method"])
    assert any(s.startswith("if os.name") for s in names["flag"])
    assert any(s.startswith("a, b =") for s in names["a"])
    assert any(s.startswith("def f7(") for s in names["f7"])
    assert not any(s.startswith("def f8(") for s in names["f7"])
    assert not lazy.body.loaded
    (whole,) = chunk.nodes()
    lazy_dump = [ast.dump(s, include_attributes=True) for s in lazy.body]
    assert lazy_dump == [ast.dump(s, include_attributes=True) for s in whole.body]
    for field in ("name", "lineno", "col_offset", "end_lineno"):
        assert getattr(lazy, field) == getattr(whole, field)
    for field in ("bases", "keywords", "decorator_list"):
        assert ast.dump(ast.Module(getattr(lazy, field), []), include_attributes=True) == (
            ast.dump(ast.Module(getattr(whole, field), []), include_attributes=True)
        )


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("import os\n", ["os"]),
        ("import os.path as p, sys\n\n# a comment\n", ["p", "sys"]),
        ("import a.b.c\n", ["a"]),
        ("from . import x\n", ["x"]),
        ("from ..pkg.mod import a as b, c\n", ["b", "c"]),
        ("from x import (\n    a,  # why\n    b as c,\n)\n", ["a", "c"]),
        ("from __future__ import annotations\n", ["annotations"]),
        ("from x import *\n", None),  # the module decides: parse
        ("import a; b = 1\n", None),
        ("from x import \\\n    a\n", None),
        ("from x import a.b\n", None),  # not Python: the parse will say so
        ("import (a)\n", None),
        ("from_bytes = 1\n", ["from_bytes"]),  # an assignment, not an import
    ],
)
def test_import_names_are_read_from_the_text(text: str, names: list[str] | None) -> None:
    from sphinxext_attn.pyeval.bindings import bound_names

    chunk = split_chunks(text, "m.py")[0]
    assert chunk_names(chunk) == names
    if names is not None:  # as the parse binds them
        assert [n for node in ast.parse(text).body for n in bound_names(node)] == names


@pytest.mark.realtree
def test_import_names_match_the_parse_on_a_release() -> None:
    """Every import piece of a real release: the names read from its text are
    the names its parse binds (or the piece is parsed instead)."""
    import vllm_trees

    from sphinxext_attn.pyeval.bindings import bound_names
    from sphinxext_attn.source.chunks import import_names

    root = vllm_trees.tree("0.33.0")
    checked = 0
    for path in sorted((root / "vllm").rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        for chunk in split_chunks(text, str(path)):
            is_import = re.match(r"(import|from)\b", chunk.text)
            names = import_names(chunk.text) if is_import else None
            if names is None:
                continue
            nodes = ast.parse(chunk.text).body
            assert len(nodes) == 1, chunk.text
            assert [n for node in nodes for n in bound_names(node)] == names, chunk.text
            checked += 1
    assert checked > 5000


def test_a_lazy_class_parses_only_the_members_asked_for() -> None:
    """``holding`` gives the members whose source holds a word; ``run_after`` those
    after a line that run with the class body (no ``def``); loaded, the whole body
    answers (and ``run_after`` still only after the line)."""
    from sphinxext_attn.pyeval.lazyclass import lazy_class

    (chunk,) = [c for c in split_chunks(LONG_CLASS, "m.py") if "class Big" in c.text]
    (whole,) = chunk.nodes()
    flag = next(s for s in whole.body if isinstance(s, ast.If))
    lazy = lazy_class(chunk)
    assert lazy is not None
    body = lazy.body
    assert [ast.unparse(s) for s in body.holding("flag")] == [ast.unparse(flag)]
    assert [s.lineno for s in body.run_after(flag.lineno - 1, "flag")] == [flag.lineno]
    assert body.run_after(flag.lineno, "flag") == []
    assert body.run_after(0, "return x") == []  # only in a def: runs later
    assert not body.loaded
    assert len(list(body)) == len(whole.body) and body.loaded
    assert len(body.holding("flag")) == len(whole.body)
    after = [s.lineno for s in body.run_after(flag.lineno, "")]
    assert after == [
        s.lineno for s in whole.body if s.lineno > flag.lineno and isinstance(s, ast.ClassDef)
    ]


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("x = y = 1\n", None),
        ("a = 1; b = 2\n", None),
        ("f(); x = 1\n", None),
        ("x = f(a=1)\n", ["x"]),
        ("x = a <= b\n", ["x"]),
        ("x = a == b\n", ["x"]),
        ("x = a != b >= c\n", ["x"]),
        ("x = 1  # y = 2\n", ["x"]),
        ("x: int = 3\n", ["x"]),
        ("x = 'a=b'\n", ["x"]),
        ("x = {'k': (y := 1)}\n", None),
    ],
)
def test_an_assignment_binds_every_target_or_is_parsed(text: str, names: list[str] | None) -> None:
    """A piece's names read from its text are all the names it binds: a second
    target or statement makes it parsed instead (a stale earlier value was read)."""
    from sphinxext_attn.pyeval.bindings import bound_names

    chunk = split_chunks(text, "m.py")[0]
    assert chunk_names(chunk) == names
    if names is not None:
        assert [n for node in ast.parse(text).body for n in bound_names(node)] == names
