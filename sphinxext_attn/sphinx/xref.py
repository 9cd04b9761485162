"""``:attn-backend:`NAME``: a link to the row of a backend in whichever page shows it.

Rows register themselves in a small domain (``attn``) as they are rendered;
the domain keeps, per backend, the pages and anchors that show it, drops a
page's entries when it is re-read and merges those of parallel readers. A
reference prefers a row on its own page, else the first page by name, so
the result does not depend on the reading order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, cast

from docutils import nodes
from sphinx.domains import Domain, ObjType
from sphinx.roles import XRefRole
from sphinx.util import logging
from sphinx.util.nodes import make_refnode

if TYPE_CHECKING:
    from docutils.nodes import Element, system_message
    from sphinx.addnodes import pending_xref
    from sphinx.application import Sphinx
    from sphinx.builders import Builder
    from sphinx.environment import BuildEnvironment

logger = logging.getLogger(__name__)

ROLE_NAME = "attn-backend"


class BackendRole(XRefRole):
    """``:attn-backend:`` with the ``attn`` domain's ``backend`` type, warning when dangling."""

    def run(self) -> tuple[list[nodes.Node], list[system_message]]:
        self.refdomain, self.reftype = "attn", "backend"
        self.classes = ["xref", "attn", "attn-backend"]
        if self.disabled:
            return self.create_non_xref_node()
        return self.create_xref_node()


class AttentionDomain(Domain):
    """Attention backends as referenceable objects."""

    name = "attn"
    label = "Attention backends"
    object_types = {"backend": ObjType("attention backend", "backend")}  # noqa: RUF012
    roles = {"backend": BackendRole(warn_dangling=True)}  # noqa: RUF012
    initial_data = {"backends": {}}  # noqa: RUF012
    data_version = 1

    @property
    def backends(self) -> dict[str, dict[str, str]]:
        """backend name -> {docname: anchor}."""
        return cast("dict[str, dict[str, str]]", self.data.setdefault("backends", {}))

    def note_backend(self, name: str, docname: str, anchor: str) -> None:
        self.backends.setdefault(name, {}).setdefault(docname, anchor)

    def clear_doc(self, docname: str) -> None:
        for name in list(self.backends):
            self.backends[name].pop(docname, None)
            if not self.backends[name]:
                del self.backends[name]

    def merge_domaindata(self, docnames: Iterable[str], otherdata: dict[str, Any]) -> None:
        wanted = set(docnames)
        for name, pages in otherdata.get("backends", {}).items():
            for docname, anchor in pages.items():
                if docname in wanted:
                    self.note_backend(name, docname, anchor)

    def find(self, name: str, fromdocname: str) -> tuple[str, str] | None:
        pages = self.backends.get(name)
        if not pages:
            return None
        docname = fromdocname if fromdocname in pages else min(pages)
        return docname, pages[docname]

    def resolve_xref(
        self,
        env: BuildEnvironment,
        fromdocname: str,
        builder: Builder,
        typ: str,
        target: str,
        node: pending_xref,
        contnode: Element,
    ) -> nodes.reference | None:
        found = self.find(target, fromdocname)
        if found is None:
            return None
        docname, anchor = found
        return make_refnode(builder, fromdocname, docname, anchor, contnode, target)

    def resolve_any_xref(
        self,
        env: BuildEnvironment,
        fromdocname: str,
        builder: Builder,
        target: str,
        node: pending_xref,
        contnode: Element,
    ) -> list[tuple[str, nodes.reference]]:
        ref = self.resolve_xref(env, fromdocname, builder, "backend", target, node, contnode)
        return [("attn:backend", ref)] if ref is not None else []

    def get_objects(self) -> Iterator[tuple[str, str, str, str, str, int]]:
        for name, pages in sorted(self.backends.items()):
            docname = min(pages)
            yield name, name, "backend", docname, pages[docname], 1


def domain_of(env: BuildEnvironment) -> AttentionDomain:
    return cast("AttentionDomain", env.get_domain("attn"))


def warn_missing(app: Sphinx, domain: Domain | None, node: pending_xref) -> bool | None:
    """Our own warning (type ``attention_backends``, subtype ``ref``) at the page and line;
    priority-list links that find no row stay quiet text."""
    if domain is None or domain.name != "attn":
        return None
    if node.get("attn_quiet"):
        return True
    known = sorted(domain_of(app.env).backends)
    hint = f"; known: {', '.join(known)}" if known else "; no page shows a backend table"
    logger.warning(
        f"unknown attention backend {node['reftarget']!r} in :{ROLE_NAME}:{hint}",
        location=node,
        type="attention_backends",
        subtype="ref",
    )
    return True


def setup_xref(app: Sphinx) -> None:
    app.add_domain(AttentionDomain)
    app.add_role(ROLE_NAME, BackendRole(warn_dangling=True))
    app.connect("warn-missing-reference", warn_missing)
