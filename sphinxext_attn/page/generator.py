"""How the release's own generator lays out its page, and the words it writes.

vLLM's page changed with its generator: table rules (``|---|`` up to 0.17,
``| --- |`` after), empty cells (``|  |``, then ``| |`` once rows pass through
``.replace("  ", " ")``), footnote texts, the prose under each heading, the
marker after a backend in a priority list, and from 0.27 the ``gen:`` markers
its page holds instead of tables. All of it is read from the generator's AST
(parsed, never run): string literals in the lists and ``append`` calls that
build the page, grouped by the function that writes them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from sphinxext_attn.model.pagetext import PageNote, PageText
from sphinxext_attn.source.astwalk import walk, walk_kept

#: A markdown table rule as the generator spells it: spaced or not.
SPACED_RULE = re.compile(r"^\| -+( \| -+)* \|$")
#: ``> **†** text``: a footnote line (the marker is not a word, unlike ``**Note:**``).
NOTE_LINE = re.compile(r"^> \*\*([^\w\s*]|\\\*)\*\* (.*)$")
#: The heading that tells which part of the page a function writes.
PRIORITY_HEADING = "## Backend Priority (CUDA)"
PREFILL_HEADING = "### Prefill Backends"

#: A run of literal lines; None where a line is computed (an f-string, a call).
Fragment = list[str | None]


def _line_of(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _fragments(func: ast.AST) -> Iterator[tuple[int, int, Fragment]]:
    """Literal lines a function writes: list items, ``append("...")`` arguments and
    returned multi-line strings, with their position for source order."""
    for node in walk(func):
        if isinstance(node, ast.List | ast.Tuple):
            lines = [_line_of(e) for e in node.elts]
            if any(line is not None for line in lines):
                yield node.lineno, node.col_offset, lines
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "append"
            and len(node.args) == 1
            and _line_of(node.args[0]) is not None
        ):
            yield node.lineno, node.col_offset, [_line_of(node.args[0])]
        elif isinstance(node, ast.Return) and node.value is not None:
            text = _line_of(node.value)
            if text is not None and "\n" in text:
                yield node.lineno, node.col_offset, list(text.split("\n"))


def _function_fragments(module: ast.Module) -> list[list[Fragment]]:
    """Each top-level function's fragments, in source order."""
    out = []
    for func in module.body:
        if isinstance(func, ast.FunctionDef):
            found = sorted(_fragments(func), key=lambda f: (f[0], f[1]))
            out.append([lines for _, _, lines in found])
    return out


def _paragraphs(fragments: list[Fragment], into: dict[str, tuple[str, ...]]) -> None:
    """``heading, "", line, line, ""``: the lines right under each heading."""
    for lines in fragments:
        for i, line in enumerate(lines):
            if line is None or not line.startswith("#") or line in into:
                continue
            rest = lines[i + 1 :]
            if rest[:1] != [""]:
                continue
            paragraph: list[str] = []
            for item in rest[1:]:
                if item is None or item == "" or item.startswith(("|", "#")):
                    break
                paragraph.append(item)
            if paragraph:
                into[line] = tuple(paragraph)


def _notes(fragments: list[Fragment]) -> list[PageNote]:
    """``> **M** text`` lines, with the ``> ...`` lines that continue them."""
    notes: list[PageNote] = []
    for lines in fragments:
        for i, line in enumerate(lines):
            match = NOTE_LINE.match(line or "")
            if match is None:
                continue
            body = [match.group(2)]
            for more in lines[i + 1 :]:
                if more is None or not more.startswith("> ") or NOTE_LINE.match(more):
                    break
                body.append(more[2:])
            notes.append(PageNote(match.group(1).replace("\\*", "*"), tuple(body)))
    return notes


def _annotations(module: ast.Module) -> dict[tuple[str, str], dict[str, str]]:
    """``mla_sm100_annotations = {"NAME": "**\\***"}``: what follows a backend's name
    in one priority list, the list named as vLLM names the variable."""
    found: dict[tuple[str, str], dict[str, str]] = {}
    for node in walk_kept(module):
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and "annotation" in node.targets[0].id
            and isinstance(node.value, ast.Dict)
        ):
            continue
        name = node.targets[0].id.lower()
        pairs = {
            _line_of(k): _line_of(v)
            for k, v in zip(node.value.keys, node.value.values, strict=True)
            if k is not None
        }
        category = "mla" if "mla" in name else "standard"
        arch = "sm100" if "sm100" in name else "default"
        found[(category, arch)] = {k: v for k, v in pairs.items() if k and v}
    return found


def _marker_keys(module: ast.Module) -> tuple[str, ...]:
    """The keys of the blocks handed to ``fill_markers(page, blocks)``: a dict
    literal, or the dict a function of the module returns."""
    defs = {f.name: f for f in module.body if isinstance(f, ast.FunctionDef)}
    for node in walk_kept(module):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "fill_markers"
            and len(node.args) == 2
        ):
            continue
        blocks = node.args[1]
        if isinstance(blocks, ast.Call) and isinstance(blocks.func, ast.Name):
            func = defs.get(blocks.func.id)
            returned = (
                [n.value for n in ast.walk(func) if isinstance(n, ast.Return)] if func else []
            )
            blocks = next((r for r in returned if isinstance(r, ast.Dict)), blocks)
        if isinstance(blocks, ast.Dict):
            keys = [_line_of(k) for k in blocks.keys if k is not None]
            return tuple(k for k in keys if k)
    return ()


def _single_spaced(module: ast.Module) -> bool:
    return any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "replace"
        and [_line_of(a) for a in n.args] == ["  ", " "]
        for n in walk_kept(module)
    )


def read_page_text(generator: ast.Module | None) -> PageText | None:
    """The page's layout and words as the release's generator writes them (None
    without a generator: an installed distribution ships none)."""
    if generator is None:
        return None
    spaced = any(
        SPACED_RULE.match(line)
        for n in walk_kept(generator)
        if (text := _line_of(n) if isinstance(n, ast.expr) else None)
        for line in text.split("\n")
    )
    paragraphs: dict[str, tuple[str, ...]] = {}
    priority: list[PageNote] = []
    prefill: list[PageNote] = []
    other: list[PageNote] = []
    for fragments in _function_fragments(generator):
        _paragraphs(fragments, paragraphs)
        written = {line for lines in fragments for line in lines if line}
        notes = _notes(fragments)
        if PRIORITY_HEADING in written:
            priority += notes
        elif PREFILL_HEADING in written:
            prefill += notes
        else:
            other += notes
    return PageText(
        spaced_rules=spaced,
        single_spaced=_single_spaced(generator),
        paragraphs=paragraphs,
        priority_notes=tuple(priority),
        prefill_notes=tuple(prefill),
        table_notes=tuple(other),
        annotations=_annotations(generator),
        marker_keys=_marker_keys(generator),
    )
