"""How the tables are dressed in HTML: a scroll box, the caption above it, marks as glyphs.

Only HTML builders run this (a post-transform), so the doctree every other
builder sees, and every cell's text, stay as the renderers built them:

* each table of ours goes into a ``div.attn-scroll`` that scrolls sideways
  inside the content column (feature tables also down, so their header row
  and Backend column can stay in view: ``attn-scroll-sticky``);
* a feature table whose Version column follows Backend (the standard table's
  FlashAttention and FlashInfer variant rows) is ``attn-keyed``: Version stays
  in view beside Backend, else three FLASH_ATTN rows scroll into one name
  (``attention_backends_tables.js`` gives it Backend's measured width as offset);
* a select table's box is ``attn-scroll-stack``: in a narrow column its reasons
  go under the backend instead of off screen;
* an MLA prefill note listing head-dimension alternatives (``(...) or (...)
  only``) puts each in a ``span.attn-alternative`` the stylesheet starts on a
  line of its own: the same text, read as a list instead of one long string;
* its title leaves the ``<caption>`` for a ``p.attn-caption`` above the box:
  a caption is as wide as its table, so a narrow priority list squeezed a
  one-line title onto three (kept inside when ``numfig`` numbers tables);
* a wrapper a theme put around the table (furo's ``table-wrapper``, which
  copies the table's ``id``) is dropped: the box already scrolls;
* ✅ and ❌ become :class:`attn_mark` spans the stylesheet draws as text
  glyphs in the page's colours (colour emoji cannot be recoloured).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

from sphinxext_attn.render.nodes import TABLE_CLASS

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.writers.html5 import HTML5Translator

SCROLL_CLASS = "attn-scroll"
STICKY_CLASS = "attn-scroll-sticky"
CAPTION_CLASS = "attn-caption"
#: tables whose header row and first column stay in view (the wide ones)
STICKY_TABLES = ("attn-features", "attn-matrix", "attn-prefill")
#: tables whose rows go under each other's key in a narrow column (the decision)
STACK_TABLES = ("attn-select",)
STACK_CLASS = "attn-scroll-stack"
#: a feature table whose variant column stays in view beside Backend
KEYED_CLASS = "attn-keyed"
KEY_HEADINGS = ("Backend", "Version")
#: the MLA prefill table's column of head-dimension alternatives, and each one's class
NOTES_TABLE, NOTES_HEADING, ALTERNATIVE_CLASS = "attn-prefill", "Notes", "attn-alternative"
#: where one alternative ends and the next begins: after "(...) or"
ALTERNATIVE_END = re.compile(r"(?<=\) or) (?=\()")
#: a mark's text -> its class
MARKS = {"✅": "attn-yes", "❌": "attn-no"}
#: wrappers themes put around every table
THEME_WRAPPERS = ("table-wrapper",)


class attn_mark(nodes.inline):  # noqa: N801 - docutils node classes are lower case
    """✅ or ❌ in a cell; HTML adds ``role="img"`` and a spoken label."""


def visit_attn_mark_html(self: HTML5Translator, node: attn_mark) -> None:
    said = "yes" if "attn-yes" in node["classes"] else "no"
    attributes: dict[str, str] = {"role": "img", "aria-label": said}
    self.body.append(self.starttag(node, "span", "", **attributes))  # type: ignore[arg-type]


def depart_attn_mark_html(self: HTML5Translator, node: attn_mark) -> None:
    self.body.append("</span>")


class DressTables(SphinxPostTransform):
    """Scroll boxes, captions above them, marks (after furo's wrapper, priority 500)."""

    formats = ("html",)
    default_priority = 800

    def run(self, **kwargs: Any) -> None:
        numbered = bool(getattr(self.config, "numfig", False))
        for table in list(self.document.findall(nodes.table)):
            if TABLE_CLASS not in table["classes"] or table.parent is None:
                continue
            self._unwrap(table)
            self._mark(table)
            if NOTES_TABLE in table["classes"]:
                _alternatives(table)
            classes = [SCROLL_CLASS]
            if any(c in table["classes"] for c in STICKY_TABLES):
                classes.append(STICKY_CLASS)
                if _headings(table)[: len(KEY_HEADINGS)] == list(KEY_HEADINGS):
                    table["classes"].append(KEYED_CLASS)
            if any(c in table["classes"] for c in STACK_TABLES):
                classes.append(STACK_CLASS)
            box = nodes.container("", classes=classes)
            parent = table.parent
            index = parent.index(table)
            parent.replace(table, box)
            box += table
            title = table.next_node(nodes.title) if not numbered else None
            if title is not None and title.parent is table:
                parent.insert(index, _caption(table, title))

    @staticmethod
    def _unwrap(table: nodes.table) -> None:
        wrapper = table.parent
        if (
            isinstance(wrapper, nodes.container)
            and len(wrapper.children) == 1
            and any(c in wrapper["classes"] for c in THEME_WRAPPERS)
            and wrapper.parent is not None
        ):
            wrapper.replace_self(table)

    @staticmethod
    def _mark(table: nodes.table) -> None:
        for text in list(table.findall(nodes.Text)):
            cls = MARKS.get(text.astext().strip())
            parent = text.parent
            if cls is None or parent is None or isinstance(parent, attn_mark):
                continue
            parent.replace(text, attn_mark("", text.astext(), classes=["attn-mark", cls]))


def _alternatives(table: nodes.table) -> None:
    """Each ``(...) or`` of a Notes cell in a span of its own (the text unchanged)."""
    headings = _headings(table)
    if NOTES_HEADING not in headings:
        return
    column = headings.index(NOTES_HEADING)
    for body in table.findall(nodes.tbody):
        for row in body.findall(nodes.row):
            if column >= len(row.children):
                continue
            for para in row.children[column].findall(nodes.paragraph):
                for text in [c for c in para.children if isinstance(c, nodes.Text)]:
                    parts = ALTERNATIVE_END.split(text.astext())
                    if len(parts) < 2:
                        continue
                    spans = [
                        nodes.inline(part, part, classes=[ALTERNATIVE_CLASS])
                        for part in [p + " " for p in parts[:-1]] + parts[-1:]
                    ]
                    index = para.index(text)
                    para.remove(text)
                    for offset, span in enumerate(spans):
                        para.insert(index + offset, span)


def _headings(table: nodes.table) -> list[str]:
    """The texts of the table's first header row."""
    head = next(iter(table.findall(nodes.thead)), None)
    row = next(iter(head.findall(nodes.row)), None) if head is not None else None
    return [entry.astext().strip() for entry in row.children] if row is not None else []


def _caption(table: nodes.table, title: nodes.title) -> nodes.paragraph:
    """The table's title as a paragraph above its box, with a link to the table."""
    table.remove(title)
    para = nodes.paragraph("", "", *title.children, classes=[CAPTION_CLASS])
    if table["ids"]:
        link = nodes.reference(
            "",
            "¶",
            refuri="#" + table["ids"][0],
            classes=["headerlink"],
            reftitle="Link to this table",
        )
        para += [nodes.Text(" "), link]  # the link may wrap alone, never the title's last word
    return para


def setup_present(app: Sphinx) -> None:
    app.add_node(attn_mark, html=(visit_attn_mark_html, depart_attn_mark_html))
    app.add_post_transform(DressTables)
