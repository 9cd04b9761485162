"""Nothing parsed twice (source/chunks, source/astwalk): a module parsed whole
from its pieces, pieces given their statements by a whole parse, and the one
list walk of a module; each must equal what parsing or walking anew gives."""

from __future__ import annotations

import ast

import pytest

from sphinxext_attn.source.astwalk import walk, walk_kept
from sphinxext_attn.source.chunks import (
    ChunkError,
    assembled,
    fill_from,
    parse_module,
    split_chunks,
)
from sphinxext_attn.source.tree import SourceTree

MODULE = '''# a comment first

"""Docs."""
import os

x = 1; y = 2


@decorated
@twice(1)
def f(a=[1, 2]):
    return {"k": (a, lambda: 3)}


class C(os.PathLike):
    value: int = 4

    def g(self):
        if self:
            return 1
        else:
            return 2
if x:
    z = 1
else:
    z = 2
'''

#: a line at column 0 inside brackets: a piece that starts inside a statement
MIS_CUT = "x = dict(\na=1)\ny = 2\n"


def dump(nodes: list[ast.stmt]) -> str:
    return ast.dump(ast.Module(nodes, []), include_attributes=True)


@pytest.mark.parametrize("parsed_first", [(), (1,), (0, 3), (0, 1, 2, 3, 4, 5)])
def test_a_module_from_its_pieces_is_the_module(parsed_first: tuple[int, ...]) -> None:
    chunks = split_chunks(MODULE, "m.py")
    assert len(chunks) == 6
    for i in parsed_first:
        chunks[i].nodes()
    kept = {i: chunks[i].nodes() for i in parsed_first}
    module = parse_module(MODULE, "m.py", chunks)
    assert dump(module.body) == dump(ast.parse(MODULE).body)
    assert all(chunk.parsed for chunk in chunks)  # the rest came with the whole
    for i, nodes in kept.items():  # a piece parsed before keeps its own nodes
        assert chunks[i].nodes() is nodes
    fresh = split_chunks(MODULE, "m.py")
    for given, alone in zip(chunks, fresh, strict=True):
        assert dump(given.nodes()) == dump(alone.nodes())


def test_pieces_cut_inside_a_statement_are_parsed_alone() -> None:
    chunks = split_chunks(MIS_CUT, "m.py")
    assert len(chunks) == 3
    fill_from(chunks, ast.parse(MIS_CUT).body)
    assert not any(chunk.parsed for chunk in chunks)
    with pytest.raises(ChunkError):
        chunks[0].nodes()
    assert assembled(split_chunks(MIS_CUT, "m.py"), MIS_CUT) is None


@pytest.mark.parametrize("text", ["  x = 1\ny = 2\n", "x = 1\ry = 2\n", "# c\n)\nx = 1\n"])
def test_text_the_pieces_miss_is_parsed_whole(text: str) -> None:
    assert assembled(split_chunks(text, "m.py"), text) is None


def test_trees_sharing_parsing_parse_each_file_once(tmp_path, monkeypatch) -> None:
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "m.py").write_text(MODULE, encoding="utf-8")
    page = SourceTree(tmp_path)
    evaluator = SourceTree(tmp_path)
    evaluator.share_parsing(page)
    calls: list[str] = []
    real = ast.parse
    monkeypatch.setattr(
        ast, "parse", lambda text, *a, **k: calls.append(text) or real(text, *a, **k)
    )
    module = page.parse("vllm/m.py")
    chunks = evaluator.chunks("vllm/m.py")
    assert module is not None and chunks is not None
    assert [n for c in chunks for n in c.nodes()] == module.body
    assert evaluator.parse("vllm/m.py") is module
    assert len(calls) == 1


def test_walk_is_ast_walk() -> None:
    module = ast.parse(MODULE)
    assert walk(module) == list(ast.walk(module))
    assert walk_kept(module) is walk_kept(module)
    other = ast.parse("x = [1]")
    assert walk_kept(other) == list(ast.walk(other))


def test_name_searches_without_a_pattern_per_name_answer_as_the_patterns() -> None:
    """lookup and tree test class names with shared patterns and ``str.find``."""
    import random
    import re

    from sphinxext_attn.source.chunks import has_class, word_boundary
    from sphinxext_attn.source.lookup import _starts_class, word_in

    rng = random.Random(22)
    alphabet = ["a", "b", "_", " ", "\n", "@", "class", "é", "1", ".", "(", "\t", "Ab"]
    names = ["a", "Ab", "a.b", "", "é1", "_"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        for name in names:
            word = re.search(rf"\b{re.escape(name)}\b", text) is not None
            assert word_in(text, name) == word, (text, name)
            found = re.search(rf"class\s+{re.escape(name)}\b", text) is not None
            assert has_class(text, name) == found, (text, name)
            header = re.match(rf"(?:@.*\n\s*)*class\s+{re.escape(name)}\b", text) is not None
            assert _starts_class(text, name) == header, (text, name)
            head = f"class {name}"
            if text.startswith(head):
                ends = re.match(rf"{re.escape(head)}\b", text) is not None
                assert word_boundary(text, len(head)) == ends, (text, name)


def test_triple_strings_pair_quotes_as_the_lazy_pattern() -> None:
    import random
    import re

    from sphinxext_attn.source.chunks import triple_strings

    pattern = re.compile(r'("""|\'\'\')(?:[\s\S]*?\1|[\s\S]*)')
    rng = random.Random(22)
    pieces = ['"', "'", "a", '"""', "'''", "\n", "\\"]
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert triple_strings(text) == [m.span() for m in pattern.finditer(text)], text
