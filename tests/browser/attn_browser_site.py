"""The page the browser tests measure: every table of vLLM 0.33.0, built once per theme.

One Sphinx build per theme, in the test process as ``sphinx-build`` runs one
(the installed themes and the editable extension are the ones under test), so
the builds share the extension's in-process memo: the release is analysed and
its selector table built once, not once per theme; the page holds
the whole page directive (priority lists, legend, every feature table), the
priority matrix, a select directive and the selector widget.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util.docutils import docutils_namespace, patch_docutils

#: theme -> whether it has a dark mode of its own
THEMES = {
    "alabaster": False,
    "furo": True,
    "sphinx_rtd_theme": False,
    "pydata_sphinx_theme": True,
    "sphinx_book_theme": True,
}
WIDTHS = (1280, 390)
SCHEMES = ("light", "dark")
VERSION = "0.33.0"

CONF = """\
project = "attn"
extensions = ["sphinxext_attn"]
attention_backends_root = {root!r}
attention_backends_source_url = (
    "https://github.com/vllm-project/vllm/blob/v{{version}}/{{path}}#L{{line}}"
)
html_theme = {theme!r}
"""

PAGE = """\
Every table of vLLM {version}
=============================

.. attention-backends::

The priority lists side by side
-------------------------------

.. attention-backends-priority::
   :layout: matrix

One decision
------------

.. attention-backends-select::
   :capability: 9.0
   :head-size: 128

The selector
------------

.. attention-backends-selector::
"""


def build_site(theme: str, tree: Path, folder: Path, page: str | None = None) -> Path:
    """Build the page (:data:`PAGE`, or ``page``'s rST) with ``theme`` under
    ``folder``; the HTML folder."""
    src = folder / "src"
    src.mkdir(parents=True, exist_ok=True)
    (src / "conf.py").write_text(CONF.format(root=str(tree), theme=theme), encoding="utf-8")
    text = PAGE.format(version=VERSION) if page is None else page
    (src / "index.rst").write_text(text, encoding="utf-8")
    out = folder / "html"
    status, warning = io.StringIO(), io.StringIO()
    # As ``sphinx-build`` runs a build (sphinx.cmd.build): the directives and roles
    # registered for this build are dropped after it.
    with patch_docutils(src), docutils_namespace():
        app = Sphinx(
            str(src), str(src), str(out), str(folder / "doctrees"), "html",
            status=status, warning=warning, freshenv=True,
        )  # fmt: skip
        app.build()
    if app.statuscode != 0 or not (out / "index.html").is_file():
        raise AssertionError(f"the build with {theme} failed:\n{warning.getvalue()[-3000:]}")
    return out


def open_page(browser: Any, site: Path, width: int, scheme: str, query: str = "") -> Any:
    """The built page in a fresh context of ``width`` px, the reader's system ``scheme``."""
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    page.goto((site / "index.html").as_uri() + query)
    page.wait_for_load_state("load")
    return page


def screenshot_dir() -> Path | None:
    """``ATTN_SCREENSHOTS``: where the layout test saves the gallery's screenshots."""
    value = os.environ.get("ATTN_SCREENSHOTS", "")
    return Path(value) if value else None
