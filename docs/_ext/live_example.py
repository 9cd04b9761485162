"""``.. live-example::``: show a piece of reStructuredText, then render it.

The source shown and the source rendered are the same text, so the directive
reference can never drift from what the directives really do.
"""

from __future__ import annotations

from typing import Any, ClassVar

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles


class LiveExample(SphinxDirective):
    """Render its content twice: as a literal rST block, then as real markup."""

    has_content = True
    option_spec: ClassVar[dict[str, Any]] = {}

    def run(self) -> list[nodes.Node]:
        source = "\n".join(self.content)
        literal = nodes.literal_block(source, source, language="rst")
        literal.source, literal.line = self.get_source_info()

        result = nodes.container(classes=["live-example"])
        label = nodes.paragraph(classes=["live-example-label"])
        label += nodes.emphasis(text="Source:")
        result += label
        result += literal
        rendered = nodes.container(classes=["live-example-output"])
        label = nodes.paragraph(classes=["live-example-label"])
        label += nodes.emphasis(text="Renders as:")
        result += label
        nested_parse_with_titles(self.state, self.content, rendered, self.content_offset)
        result += rendered
        return [result]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("live-example", LiveExample)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
