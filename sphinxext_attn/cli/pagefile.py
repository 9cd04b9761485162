"""The page file of the command line: which template, and never destroying one.

A pre-commit hook must not rewrite text it would not write itself. So
``--check`` takes the existing page as its template (its prose is kept), and a
page holding vLLM's ``gen:`` markers (0.27 on) is never written over: vLLM's
docs build fills those markers, and the markers are the page's content. The
hook only checks that the page has every marker the release's generator fills.
"""

from __future__ import annotations

import sys
from pathlib import Path

from sphinxext_attn.render import markers

#: vLLM's own page in its tree (the hook's output, the default template to fill).
TREE_PAGE = "docs/design/attention_backends.md"


def read_text(path: Path) -> str | None:
    """The text of a page, None if there is none (or it cannot be read as text)."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def generator_keys(root: Path) -> tuple[str, ...] | None:
    """The ``gen:`` keys the tree's own generator fills (None: the tree ships none)."""
    # lazy: a kept page run loads this module and no page or source module
    # (tests/cli/test_runcache.py); they cost 22 ms (python -X importtime, median of 7)
    from sphinxext_attn.page.columns import read_generator
    from sphinxext_attn.page.generator import read_page_text
    from sphinxext_attn.source.tree import SourceTree

    text = read_page_text(read_generator(SourceTree(root)))
    return text.marker_keys if text is not None and text.marker_keys else None


def marker_page(out: Path, root: Path, check: bool) -> int | None:
    """The exit status for an output page holding ``gen:`` markers, which is left as
    it is (None: the page holds none). ``--check`` passes when the page has every
    marker the release's generator fills; a plain write refuses to replace it."""
    text = read_text(out) if out.is_file() else None
    if text is None or not markers.has_markers(text):
        return None
    if not check:
        print(
            f'sphinxext-attn: {out} holds vLLM\'s --8<-- "gen:..." markers, which vLLM '
            "fills when it builds its docs; not written over (write elsewhere with -o; "
            "--fill-markers fills them)",
            file=sys.stderr,
        )
        return 2
    keys = generator_keys(root)
    problems = markers.marker_problems(text, keys) if keys is not None else []
    if problems:
        for problem in problems:
            print(f"{out}: {problem}", file=sys.stderr)
        return 1
    print(f"Left as it is: {out} (vLLM fills its gen: markers when it builds its docs)")
    return 0


def output_path(output: str | None, diff: str | None, root: Path, default: str) -> Path | None:
    """The file a run writes: ``-o``; without it the tree's page (a diff: stdout);
    None for standard output."""
    if output == "-" or (output is None and diff):
        return None
    return Path(output) if output else root / default


def template_path(
    template: str | None, fill: bool, check: bool, out: Path | None, root: Path
) -> Path | None:
    """The template: ``--template``; with ``--fill-markers``, the tree's own page;
    with ``--check``, the existing output (its prose is kept)."""
    if template:
        return Path(template)
    if fill:
        return root / TREE_PAGE
    if check and out is not None and out.is_file():
        return out
    return None
