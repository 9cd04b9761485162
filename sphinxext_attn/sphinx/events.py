"""Environment and build events: freshness, purge/merge, priming, the stylesheet.

Priming matters for parallel reads: the trees the pages need are analysed
(or taken from the environment) in the main process before Sphinx forks its
readers, so each file is read once and each diagnostic reported once.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from docutils import nodes
from sphinx.util import texescape

from sphinxext_attn.model.key import AnalysisKey
from sphinxext_attn.render.nodes import TABLE_CLASS
from sphinxext_attn.sphinx import cache, config, trees
from sphinxext_attn.sphinx.build_state import hand_to_env, state_of

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

CSS_FILE = "attention_backends.css"
CSS_PATH = Path(__file__).resolve().parent.parent / CSS_FILE
#: measures the Backend column so a keyed table's Version column sticks beside it
JS_FILE = "attention_backends_tables.js"
JS_PATH = CSS_PATH.parent / JS_FILE
#: LaTeX package with the tables' symbols for every engine (``\usepackage`` by setup())
LATEX_PACKAGE = "sphinxextattn"
LATEX_STY_PATH = CSS_PATH.parent / f"{LATEX_PACKAGE}.sty"


def builder_inited(app: Sphinx) -> None:
    hand_to_env(app)
    trees.resolve_for_build(app)
    if app.builder.format == "html":
        app.add_css_file(CSS_FILE)
        app.add_js_file(JS_FILE, defer="defer")


def build_finished(app: Sphinx, exception: BaseException | None) -> None:
    if exception is None and app.builder.format == "html":
        _copy(CSS_PATH, Path(app.outdir, "_static"))
        _copy(JS_PATH, Path(app.outdir, "_static"))
    if exception is None and app.builder.format == "latex":
        # the package setup() asks for: symbols pdflatex and xelatex can typeset
        _copy(LATEX_STY_PATH, Path(app.outdir))


def _copy(source: Path, folder: Path) -> None:
    """Copy a static file, replacing an older copy (on every Sphinx from 7.2)."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, folder / source.name)


#: From this many columns a table gets less padding between them in LaTeX.
WIDE_COLUMNS = 12


def breakable_literals(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """LaTeX: let long names in table cells break after ``_`` (paths after ``/``)
    so wide tables fit.

    ``FLASHINFER_MLA_SPARSE_SM120`` or ``nvfp4_4over6`` in a narrow column
    would otherwise run into the next one; HTML wraps them by itself. The
    table is also bracketed by macros of ``sphinxextattn.sty`` that keep
    tabulary from squeezing a column below the width of a name's part.
    """
    if app.builder.format == "text":
        _wide_enough_for_text(doctree)
    if app.builder.format != "latex":
        return
    for table in list(doctree.findall(nodes.table)):
        if TABLE_CLASS not in table["classes"] or table.parent is None:
            continue
        # a wider floor for squeezed columns, for this table only (sphinxextattn.sty);
        # less padding where a dozen columns share the line
        wide = len(list(table.findall(nodes.colspec))) >= WIDE_COLUMNS
        begin = r"\sphinxextattnbegintable" + (r"\sphinxextattnbeginwide{}" if wide else "")
        end = r"\sphinxextattnendtable" + (r"\sphinxextattnendwide{}" if wide else "")
        index = table.parent.index(table)
        table.parent.insert(index + 1, nodes.raw("", end, format="latex"))
        table.parent.insert(index, nodes.raw("", begin, format="latex"))
        for literal in list(table.findall(nodes.literal)):
            text = texescape.escape(literal.astext(), app.config.latex_engine)
            text = text.replace(r"\_", r"\_\allowbreak{}").replace("/", r"/\allowbreak{}")
            latex = rf"\sphinxcode{{\sphinxupquote{{{text}}}}}"
            literal.replace_self(nodes.raw("", latex, format="latex"))


#: the text writer counts ``colwidth`` in characters; ✅ takes two
MIN_TEXT_COLWIDTH = 4


def _wide_enough_for_text(doctree: nodes.document) -> None:
    """Text output: no column narrower than its longest word (plus quotes) or a symbol.

    ``:widths: 1, 2`` are proportions and auto widths are estimates; the text
    writer takes them as characters, splits names like ``"FLASHINFER"``, and
    Sphinx 7.2's loops for ever on a cell it cannot fit at all.
    """
    for table in doctree.findall(nodes.table):
        if TABLE_CLASS not in table["classes"]:
            continue
        specs = list(table.findall(nodes.colspec))
        widths = [max(1, int(c.get("colwidth", 0) or 0)) for c in specs]
        if not widths:
            continue
        need = [MIN_TEXT_COLWIDTH] * len(widths)
        for row in table.findall(nodes.row):
            for i, entry in enumerate(row.children[: len(need)]):
                words = entry.astext().split()
                if words:
                    need[i] = max(need[i], max(len(w) for w in words) + 3)
        factor = -(-MIN_TEXT_COLWIDTH // min(widths))
        for spec, width, least in zip(specs, widths, need, strict=True):
            spec["colwidth"] = max(width * factor, least)


def _analyses_in_use(env: BuildEnvironment) -> dict[AnalysisKey, set[str]]:
    """analysis -> docs whose tables come from it."""
    by_key: dict[AnalysisKey, set[str]] = {}
    for docname, keys in cache.env_docs(env).items():
        for key in keys:
            by_key.setdefault(key, set()).add(docname)
    return by_key


def get_outdated(
    app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]
) -> Iterable[str]:
    """Pages with tables from a tree whose files or listings changed (added files too)."""
    state_of(env).new_read_phase()
    stale: set[str] = set()
    for key, docs in _analyses_in_use(env).items():
        if cache.is_stale(env, key):
            stale |= docs
    return sorted(stale - removed)


def before_read_docs(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """In parallel builds, analyse the needed trees before the readers fork."""
    if app.parallel <= 1 or not docnames:
        return
    docs = cache.env_docs(env)
    roots: set[AnalysisKey] = set()
    for docname in docnames:
        roots |= docs.get(docname, set())
    if any(d not in docs for d in docnames):
        root = trees.build_root(env)
        if root is None:
            trees.warn_no_root(env)
        else:
            state = state_of(env)
            roots.add(state.key(root, config.profile(env), config.environment(env)))
    for key in sorted(roots, key=repr):
        cache.report(env, key.root, cache.get_analysis(env, key), strict=config.strict(env))


def purge_doc(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    cache.env_docs(env).pop(docname, None)


def merge_info(
    app: Sphinx, env: BuildEnvironment, docnames: Iterable[str], other: BuildEnvironment
) -> None:
    """Take the parallel reader's records of its pages and any tree it analysed."""
    mine, theirs = cache.env_docs(env), cache.env_docs(other)
    for docname in docnames:
        if docname in theirs:
            mine[docname] = set(theirs[docname])
    for key, entry in cache.env_cache(other).items():
        cache.env_cache(env).setdefault(key, entry)


def env_updated(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Forget analyses of trees no page uses any more."""
    used = set(_analyses_in_use(env))
    cache_ = cache.env_cache(env)
    for key in [k for k in cache_ if k not in used]:
        del cache_[key]
    return []
