"""Cells that say where they come from, and rows other pages can link to.

With ``attention_backends_source_url`` set, a cell becomes a link to the line
its value was read from (the template gets ``{path}``, ``{line}`` and the
tree's ``{version}``, as ``sphinx.ext.linkcode`` would). Without it, HTML
still shows the place as a tooltip: an :class:`attn_source` node, an inline
that only the HTML translator dresses with a ``title``; every other builder
sees a plain inline (Sphinx dispatches visitors along the node's MRO).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from docutils import nodes
from sphinx import addnodes
from sphinx.util import logging

from sphinxext_attn.model.records import BackendFeatures, Location
from sphinxext_attn.render.decorate import ASSUMED_MARK, NOTED_MARK, Decorations
from sphinxext_attn.render.markdown import TEMPLATE_ERRORS, fill_source_url
from sphinxext_attn.sphinx.build_state import state_of
from sphinxext_attn.sphinx.xref import domain_of

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment
    from sphinx.writers.html5 import HTML5Translator

logger = logging.getLogger(__name__)

SOURCE_URL_CONFIG = "attention_backends_source_url"
SOURCE_CLASS = "attn-src"
#: env.temp_data key: backend name -> how many rows of it this page has targeted
_IDS_KEY = "attention_backends_ids"


class attn_source(nodes.inline):  # noqa: N801 - docutils node classes are lower case
    """An inline that remembers where its text was read (``location``)."""


def visit_attn_source_html(self: HTML5Translator, node: attn_source) -> None:
    self.body.append(self.starttag(node, "span", "", title=node["location"]))


def depart_attn_source_html(self: HTML5Translator, node: attn_source) -> None:
    self.body.append("</span>")


def backend_id(name: str) -> str:
    """The HTML id of a backend's row: ``attn-backend-flash-attn``."""
    return nodes.make_id(f"attn-backend-{name}")


def source_url(
    env: BuildEnvironment, template: str, location: Location, version: str | None
) -> str | None:
    """Fill the template; a bad placeholder is a warning (once per template and build)
    and no link."""
    try:
        return fill_source_url(template, location, version)
    except TEMPLATE_ERRORS as err:
        bad = state_of(env).bad_templates
        if template not in bad:
            bad.add(template)
            logger.warning(
                f"{SOURCE_URL_CONFIG}: cannot fill {template!r} ({err!r}); "
                "use {path}, {line} and {version}",
                type="attention_backends",
                subtype="config",
            )
        return None


class SphinxDecorations(Decorations):
    """Source links or tooltips, row targets with index entries, and priority xrefs."""

    def __init__(
        self,
        env: BuildEnvironment,
        version: str | None,
        *,
        root: str = "",
        targets: bool = True,
        sources: bool = True,
        template: str | None = None,
    ) -> None:
        self.env = env
        self.version = version
        self.root = root
        #: a directive's ``:source-url:`` (``none``: tooltips only) wins over the config
        if template is None:
            template = getattr(env.config, SOURCE_URL_CONFIG, None)
        self.template = None if (template or "").strip().lower() in ("", "none") else template
        self.targets = targets
        self.sources = sources

    def source(self, location: Location | None, cell: list[nodes.Node]) -> list[nodes.Node]:
        if location is None or not self.sources or not cell:
            return cell
        where = str(location)
        url = (
            source_url(self.env, self.template, location, self.version) if self.template else None
        )
        if url:
            ref = nodes.reference("", "", *cell, refuri=url, reftitle=where, internal=False)
            ref["classes"].append(SOURCE_CLASS)
            return [ref]
        return [attn_source("", "", *cell, location=where, classes=[SOURCE_CLASS])]

    def unknown(
        self, reason: str, location: Location | None, cell: list[nodes.Node]
    ) -> list[nodes.Node]:
        """``?`` with the reason as its tooltip (HTML), linked to the place when known."""
        where = f" ({location})" if location is not None else ""
        marked = attn_source(
            "", "", *cell, location=f"not evaluated: {reason}{where}", classes=["attn-unknown"]
        )
        return [marked]

    def assumed(self, facts: tuple[str, ...], cell: list[nodes.Node]) -> list[nodes.Node]:
        """The marker with the facts on hover (HTML); the note under the table lists them."""
        text = f"assuming {', '.join(facts)}"
        mark = attn_source("", ASSUMED_MARK, location=text, classes=["attn-assumed"])
        return [*cell, mark]

    def noted(self, note: str, cell: list[nodes.Node]) -> list[nodes.Node]:
        """The marker with the note on hover (HTML); the note under the table gives it."""
        mark = attn_source("", NOTED_MARK, location=note, classes=["attn-noted"])
        return [*cell, mark]

    def row_target(self, row: BackendFeatures) -> list[nodes.Node]:
        """The first row of a backend on a page gets its target, index entries and
        a place in the backend registry; later rows only a unique id."""
        if not self.targets:
            return []
        seen = cast("dict[str, int]", self.env.temp_data.setdefault(_IDS_KEY, {}))
        count = seen[row.name] = seen.get(row.name, 0) + 1
        anchor = backend_id(row.name) + ("" if count == 1 else f"-{count}")
        target = nodes.target("", "", ids=[anchor])
        if count > 1:
            return [target]

        domain_of(self.env).note_backend(row.name, self.env.docname, anchor)
        index = addnodes.index(
            entries=[
                ("single", f"{row.name} (attention backend)", anchor, "", None),
                ("single", f"attention backend; {row.name}", anchor, "", None),
            ]
        )
        return [index, target]

    def backend_ref(self, name: str) -> list[nodes.Node]:
        """A quiet cross-reference: it links when some page shows the row, else stays text."""
        ref = addnodes.pending_xref(
            "",
            nodes.literal(name, name, classes=["xref", "attn", "attn-backend"]),
            refdomain="attn",
            reftype="backend",
            reftarget=name,
            refexplicit=False,
            refwarn=False,
            attn_quiet=True,
        )
        return [ref]


def setup_nodes(app: Sphinx) -> None:
    app.add_node(attn_source, html=(visit_attn_source_html, depart_attn_source_html))
