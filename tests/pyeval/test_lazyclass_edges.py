"""A class parsed member by member (pyeval/lazyclass) when a member does not parse
alone, when the class does not parse at all, and the headers it leaves to the whole
parse: each answer is the whole parse's, or the class is not cut."""

from __future__ import annotations

import ast

import pytest

from sphinxext_attn.pyeval.lazyclass import (
    LazyBody,
    class_of_chunk,
    class_piece_names,
    lazy_class,
    statements_for,
)
from sphinxext_attn.pyeval.values import Unknown
from sphinxext_attn.source.chunks import LAZY_CHARS, Chunk, split_chunks

PADDING = "".join(f"    def f{i}(self):\n        return {i}\n\n" for i in range(200))
#: a stray triple quote in a comment pairs with the one after it: the pieces between
#: are merged into one, which holds more than one statement
STRAY = "    # a stray ''' quote\n    x = 1\n    y = 2  # and its pair '''\n\n"
MERGED_CLASS = "class Big:\n    a = 1\n\n" + STRAY + "    z = 2\n\n" + PADDING
BROKEN_CLASS = "class Big:\n    a = 1\n\n    def g(:\n        pass\n\n" + PADDING


def lazy_of(text: str) -> ast.ClassDef:
    (chunk,) = [c for c in split_chunks(text, "m.py") if "class Big" in c.text]
    node = lazy_class(chunk)
    assert node is not None and isinstance(node.body, LazyBody)
    return node


def whole_body(text: str) -> list[str]:
    (node,) = [n for n in ast.parse(text).body if isinstance(n, ast.ClassDef)]
    return [ast.dump(s, include_attributes=True) for s in node.body]


def dumps(nodes: list[ast.stmt]) -> list[str]:
    return [ast.dump(s, include_attributes=True) for s in nodes]


def test_a_member_that_does_not_parse_alone_falls_back_to_the_whole_class() -> None:
    # asked by name (the merged member holds ``x``)
    node = lazy_of(MERGED_CLASS)
    assert dumps(statements_for(node, "x")) == whole_body(MERGED_CLASS)
    assert node.body.loaded
    assert dumps(statements_for(node, "a")) == whole_body(MERGED_CLASS)  # loaded: all
    # read as a list
    node = lazy_of(MERGED_CLASS)
    assert dumps(list(node.body)) == whole_body(MERGED_CLASS)
    # by a word it holds
    node = lazy_of(MERGED_CLASS)
    assert dumps(node.body.holding("stray")) == whole_body(MERGED_CLASS)
    # after a line
    node = lazy_of(MERGED_CLASS)
    after = node.body.run_after(2, "x")
    assert [s.lineno for s in after] == [5, 6, 8]  # x, y and z, the defs left out


def test_a_lazy_body_reads_as_the_list_it_stands_for() -> None:
    node = lazy_of(MERGED_CLASS.replace(STRAY, ""))
    body = node.body
    assert bool(body) and not body.loaded  # truth needs no parse
    first = body[0]
    assert body.loaded and isinstance(first, ast.Assign)
    assert [s.lineno for s in reversed(body)][-1] == first.lineno
    assert len(body) == 202
    assert not LazyBody(Chunk("m.py", 1, "class A:\n    pass\n"), [], lambda: None)


def test_a_class_that_does_not_parse_is_unknown_unless_the_file_finds_it() -> None:
    node = lazy_of(BROKEN_CLASS)
    with pytest.raises(Unknown, match="class cannot be parsed"):
        statements_for(node, "g")
    (chunk,) = [c for c in split_chunks(BROKEN_CLASS, "m.py") if c.text.startswith("class")]
    found = ast.parse("class Big:\n    a = 2\n").body[0]
    assert isinstance(found, ast.ClassDef)
    node = lazy_class(chunk, lambda: found)
    assert node is not None
    assert dumps(list(node.body)) == dumps(found.body)


@pytest.mark.parametrize(
    "text",
    [
        "class Big: x = 1\n" + "# pad\n" * LAZY_CHARS,  # a body on the header's line
        "class Big(A,\n" + "x" * LAZY_CHARS,  # does not tokenize
        "class Big:\n" + "#" * LAZY_CHARS + "\n",  # no indented line in the body
        "class Big(1 +):\n" + PADDING,  # a header that does not parse
        "x = 1\nclass Big:\n" + PADDING,  # more than the class statement
    ],
)
def test_headers_left_to_the_whole_parse(text: str) -> None:
    assert lazy_class(Chunk("m.py", 1, text)) is None


def test_class_piece_names_need_a_class_header() -> None:
    assert class_piece_names(Chunk("m.py", 1, "@deco\ndef f():\n    pass\n")) is None
    assert class_piece_names(Chunk("m.py", 1, "@deco\nclass A:\n    pass\n")) == ["A"]
    assert class_piece_names(Chunk("m.py", 1, "class A(b := 1):\n    pass\n")) is None


def test_a_class_piece_is_cut_once() -> None:
    (chunk,) = [c for c in split_chunks(MERGED_CLASS, "m.py") if c.text.startswith("class")]
    first = class_of_chunk(chunk, "Big", lambda: None)
    assert first is not None and class_of_chunk(chunk, "Big", lambda: None) is first
    other = Chunk("m.py", 1, MERGED_CLASS)
    assert class_of_chunk(other, "Other", lambda: None) is None
    assert other.lazy is False and class_of_chunk(other, "Big", lambda: None) is None


def test_names_bound_after_the_first_statement_of_a_merged_member_are_found(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Indexed by its first statement only, the merged member hid ``x`` and ``y``
    (AttributeError where CPython answers), and the ``append`` that changes ``a``."""
    from evaluator import our_answer

    answer = our_answer(tmp_path_factory.mktemp("a"), MERGED_CLASS, ["return Big.x, Big.y"])
    assert answer == ("ok", (1, 2))
    changed = MERGED_CLASS.replace("x = 1\n    y = 2", "a = []\n    a.append(3)")
    kind, reason = our_answer(tmp_path_factory.mktemp("b"), changed, ["return Big.a"])
    assert kind == "unknown" and reason.startswith("Big.a is changed in the class body")


def test_a_merged_member_of_one_statement_runs_after_a_line_only_past_it() -> None:
    # the lines at the body's indent inside the list seem to be in a string: one piece
    one = "    x = [  # a stray ''' quote\n    1,\n    ]  # and its pair '''\n\n"
    text = "class Big:\n    a = 1\n\n" + one + PADDING
    node = lazy_of(text)
    (merged,) = [m for m in node.body.members if m.merged]
    assert merged.line == 4
    assert [s.lineno for s in node.body.run_after(2, "x")] == [4]
    assert node.body.run_after(4, "x") == []
    assert not node.body.loaded


def test_a_colon_in_a_decorator_does_not_end_the_header() -> None:
    """``@lambda c: c`` has a colon outside brackets before ``class``: the header
    still ends at the class's own colon."""
    text = "@lambda c: c\nclass Big:\n    a = 1\n\n" + PADDING
    node = lazy_of(text)
    assert node.lineno == 2 and len(node.decorator_list) == 1
    assert dumps(list(node.body)) == whole_body(text)
