"""Hooks the Sphinx layer uses to dress table cells: source links, row targets, xrefs.

The renderers in :mod:`sphinxext_attn.render.nodes` stay Sphinx-free; they ask
a :class:`Decorations` object for the extra nodes, and the default adds none,
so the tables come out exactly as before when nothing is configured.
"""

from __future__ import annotations

from docutils import nodes

from sphinxext_attn.model.records import BackendFeatures, Location

#: The marker of a cell that rests on an assumption about the machine.
ASSUMED_MARK = "°"
#: The marker of a cell with a note (the declared KV dtypes where vLLM's selection
#: accepts others).
NOTED_MARK = "§"


class Decorations:
    """No provenance, no targets, plain literals: the tables as data only."""

    def source(self, location: Location | None, cell: list[nodes.Node]) -> list[nodes.Node]:
        """Wrap a cell's nodes to show where its value was read."""
        return cell

    def unknown(
        self, reason: str, location: Location | None, cell: list[nodes.Node]
    ) -> list[nodes.Node]:
        """A cell that could not be evaluated: marked, with its reason where the
        output can show one."""
        return [nodes.inline("", "", *cell, classes=["attn-unknown"])]

    def assumed(self, facts: tuple[str, ...], cell: list[nodes.Node]) -> list[nodes.Node]:
        """A cell whose answer rests on facts about the machine (``NAME=VALUE``):
        marked; the note under the table lists them."""
        mark = nodes.superscript("", ASSUMED_MARK, classes=["attn-assumed"])
        return [*cell, mark]

    def noted(self, note: str, cell: list[nodes.Node]) -> list[nodes.Node]:
        """A cell with a note (the note under the table gives it)."""
        mark = nodes.superscript("", NOTED_MARK, classes=["attn-noted"])
        return [*cell, mark]

    def row_target(self, row: BackendFeatures) -> list[nodes.Node]:
        """Nodes put first in a row's first cell (a target, index entries)."""
        return []

    def backend_ref(self, name: str) -> list[nodes.Node]:
        """A backend name in a priority list (a link to its feature row, when known)."""
        return [nodes.literal(name, name)]


PLAIN = Decorations()
