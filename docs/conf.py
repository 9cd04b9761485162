"""Sphinx configuration of the sphinxext-attn documentation.

The docs are built with the extension itself. Which vLLM tree the live tables
come from:

* ``ATTN_VLLM_TREE=/path/to/tree`` (the folder holding ``vllm/``): a real vLLM
  release or checkout, for example ``$(python -m sphinxext_attn fetch 0.33.0)``;
* ``ATTN_VLLM_TREE=installed``: the installed ``vllm`` distribution, found by
  the extension without importing it;
* ``ATTN_VLLM_TREE=demo``: the small invented tree in ``docs/_demo_tree``;
* unset or empty: a real release when one is at hand (an installed ``vllm``,
  else the newest tree fetched into ``~/.cache/sphinxext-attn/trees``, ``$VLLM_TREES``
  or ``~/.cache/vllm-trees``), otherwise the demo tree, with a warning on stderr and a
  note on the pages.

Nothing is silenced: problems of an unmodified release (a registry entry the
release cannot back) are info messages listed under the tables, so ``-W``
passes; ``ATTN_DOCS_STRICT=1`` sets ``attention_backends_strict`` to make them
warnings.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Let a plain ``sphinx-build docs ...`` from a checkout find the package
# even when it is not installed (tox installs it, so this is a fallback).
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE / "_ext"))

from sphinxext_attn import __version__  # noqa: E402

project = "sphinxext-attn"
author = "sphinxext-attn contributors"
copyright = "2025, sphinxext-attn contributors"
release = __version__
version = ".".join(__version__.split(".")[:2])

extensions = [
    "sphinxext_attn",
    "myst_parser",
    "live_example",  # docs/_ext: show rST source next to what it renders
]

# --- where the tables come from ---------------------------------------------


def _release_at_hand() -> str:
    """``installed`` if a vllm distribution is importable (it is not imported), else
    the newest fetched release tree, else "" (the demo tree)."""
    import importlib.util

    if importlib.util.find_spec("vllm") is not None:
        return "installed"
    caches = [Path.home() / ".cache" / "sphinxext-attn" / "trees"]  # ``fetch``'s default
    caches.append(Path(os.environ.get("VLLM_TREES") or Path.home() / ".cache" / "vllm-trees"))
    trees = []
    for path in (p for cache in caches for p in cache.glob("vllm-*")):
        numbers = path.name.removeprefix("vllm-").split(".")
        if all(n.isdigit() for n in numbers) and (path / "vllm" / "__init__.py").is_file():
            trees.append((tuple(int(n) for n in numbers), path))
    return str(max(trees)[1]) if trees else ""


_asked = os.environ.get("ATTN_VLLM_TREE", "").strip()
_tree = _asked or _release_at_hand()
#: no tree was asked for and none is at hand: the demo tree stands in, and says so
_fell_back = not _tree
if _tree == "demo":
    _tree = ""
if _tree == "installed":
    # Leave attention_backends_root unset: the extension looks for an
    # installed vllm distribution (without importing it).
    attn_tree_label = "the installed ``vllm`` distribution"
elif _tree:
    attention_backends_root = str(Path(_tree).expanduser().resolve())
    attn_tree_label = f"the vLLM tree ``{Path(attention_backends_root).name}``"
else:
    attention_backends_root = "_demo_tree"
    # The demo tree has a backend interface, a CUDA platform and a selector config
    # to evaluate, so it is read in the default (runtime) profile like a release.
    attn_tree_label = "the bundled demo tree (``docs/_demo_tree``), not a real vLLM release"
    if _fell_back:
        _how = "python -m sphinxext_attn fetch 0.33.0 (or set ATTN_VLLM_TREE)"
        attn_tree_label += (
            f" (no vLLM release was found when these pages were built; ``{_how}`` gives one)"
        )
        # printed, not logged: -W builds (tox -e docs) still pass on a fresh machine
        print(
            "WARNING: no vLLM release found: the docs' tables come from the demo tree "
            f"docs/_demo_tree; {_how}",
            file=sys.stderr,
        )

attention_backends_strict = os.environ.get("ATTN_DOCS_STRICT", "") == "1"

# Provenance and release diffs (docs/beyond.rst). Cells of a real release link
# to its sources on GitHub; the bundled demo trees are the two sides of the
# live diff, and the demo's files are copied next to the HTML pages so the
# demo tables on that page can link to them without any network.
if _tree and _tree != "installed":
    attention_backends_source_url = (
        "https://github.com/vllm-project/vllm/blob/v{version}/{path}#L{line}"
    )
attention_backends_trees = {"demo-old": "_demo_tree_old", "demo": "_demo_tree"}
if not _tree:
    # a site of the demo tree serves its files (vllm/...) next to the pages; a site
    # built from a real release ships none of the demo (its example links stay tooltips)
    html_extra_path = ["_demo_tree"]
    tags.add("attn_demo_site")  # noqa: F821  (Sphinx puts ``tags`` in conf.py's namespace)

rst_epilog = f"""
.. |attn_tree| replace:: {attn_tree_label}
"""

# --- sources -----------------------------------------------------------------

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_demo_tree", "_demo_tree_old", "Thumbs.db", ".DS_Store"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
nitpicky = True

# --- HTML --------------------------------------------------------------------

html_theme = "furo"
html_title = f"sphinxext-attn {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]

# --- LaTeX / PDF ---------------------------------------------------------------
# Wide tables: tabulary fits them to the line width with wrapping cells (the
# extension makes long ones longtable, which breaks across pages), and small
# type lets ten columns fit on a portrait A4 page.

# No latex_engine and no symbol definitions: the extension makes its tables'
# symbols (✅ ❌ † ‡ ≥) typeset with Sphinx's default pdflatex and with xelatex.
latex_table_style = ["booktabs", "colorrows"]
latex_elements = {
    "papersize": "a4paper",
    "pointsize": "10pt",
    "preamble": r"""
\AtBeginEnvironment{longtable}{\footnotesize}
\AtBeginEnvironment{tabulary}{\footnotesize}
""",
}
latex_documents = [
    (root_doc, "sphinxext-attn.tex", "sphinxext-attn", author, "manual"),
]
# Every table cell links to its source line: as footnotes that would be a
# thousand of them, and the marks would widen the narrow columns.
latex_show_urls = "no"

# --- man / text -----------------------------------------------------------------

man_pages = [("cli", "sphinxext-attn", "render vLLM attention-backend tables", [author], 1)]
