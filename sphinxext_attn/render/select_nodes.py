"""A selection decision as docutils nodes: the list, the pick, the reasons.

One table, one row per backend of the list the pick was made from, in
priority order; the chosen row carries the class ``attn-selected``. Each
reason links to the line vLLM states it on (through the decorations).
"""

from __future__ import annotations

from docutils import nodes

from sphinxext_attn.model.records import Location
from sphinxext_attn.model.selection import Alternative, Config, Decision, request_summary
from sphinxext_attn.render.decorate import PLAIN, Decorations
from sphinxext_attn.render.nodes import Cell, TableSpec, build_table
from sphinxext_attn.render.select_text import alternative_parts

SELECTED_CLASS = "attn-selected"
HEADER = ("Priority", "Backend", "Result", "Why")


def _location(text: str) -> Location | None:
    path, _, line = text.rpartition(":")
    return Location(path, int(line)) if path and line.isdigit() else None


def _reasons(decision: Decision, name: str, deco: Decorations) -> Cell:
    if name in decision.unknown:
        return f"not evaluated: {decision.unknown[name]}"
    reasons = decision.rejected.get(name, [])
    sources = decision.sources.get(name, [])
    cell: list[nodes.Node] = []
    for i, reason in enumerate(reasons):
        if i:
            cell.append(nodes.Text("; "))
        where = _location(sources[i]) if i < len(sources) else None
        cell += deco.source(where, [nodes.Text(reason)]) if where else [nodes.Text(reason)]
    return cell


def decision_nodes(
    config: Config,
    decision: Decision,
    spec: TableSpec,
    *,
    deco: Decorations = PLAIN,
    gpu: str = "",
    alternatives: list[Alternative] | None = None,
) -> list[nodes.Node]:
    """The decision table, with a line saying what vLLM does when nothing qualifies
    (``alternatives``: what would change it, as ``select`` words each)."""
    out: list[nodes.Node] = []
    if decision.error:
        out.append(
            nodes.paragraph("", f"Not evaluated: {decision.error}", classes=["attn-unknown"])
        )
        return out
    rows: list[list[Cell]] = []
    for rank, name in enumerate(decision.priorities, 1):
        rows.append(
            [
                str(rank),
                deco.backend_ref(name),
                decision.label(name),
                _reasons(decision, name, deco),
            ]
        )
    table = build_table(
        list(HEADER),
        rows,
        spec,
        title=config.describe(gpu),
        classes=("attn-select",),
    )
    if decision.selected in decision.priorities:
        index = decision.priorities.index(decision.selected)
        body = next(iter(table.findall(nodes.tbody)))
        row = body.children[index]
        if isinstance(row, nodes.Element):
            row["classes"].append(SELECTED_CLASS)
    out.append(table)
    if decision.candidates:  # the code cannot settle it: each candidate and its condition
        out.insert(0, nodes.paragraph("", "vLLM's pick is conditional:", classes=["attn-pick"]))
        items = nodes.bullet_list(classes=["attn-candidates"])
        for candidate in decision.candidates:
            text = f"{candidate['backend']} if {candidate['if']}"
            items += nodes.list_item("", nodes.paragraph("", text))
        out.insert(1, items)
    elif decision.refused or decision.raised:
        raised = decision.refused or decision.raised
        out.append(nodes.paragraph("", f"vLLM raises {raised}", classes=["attn-none"]))
    elif decision.selected is None:
        out.append(
            nodes.paragraph(
                "",
                "No backend qualifies: vLLM raises an error for this configuration "
                "(no valid backend).",
                classes=["attn-none"],
            )
        )
    else:
        para = nodes.paragraph("", "vLLM picks ", classes=["attn-pick"])
        para += nodes.literal(decision.selected, decision.selected, classes=[SELECTED_CLASS])
        if decision.flash_attn_version is not None:
            para += nodes.Text(f", which runs FlashAttention {decision.flash_attn_version}")
        if decision.class_path:  # a plugin's class behind the name
            para += nodes.Text(", the class ")
            para += nodes.literal(decision.class_path, decision.class_path)
        para += nodes.Text(".")
        out.insert(0, para)
    if decision.requested is not None:  # a backend asked for: what vLLM does with it
        first, *reasons = request_summary(decision)
        out.insert(0, nodes.paragraph("", first[0].upper() + first[1:], classes=["attn-request"]))
        if reasons:
            items = nodes.bullet_list(classes=["attn-request-reasons"])
            for reason in reasons:
                items += nodes.list_item("", nodes.paragraph("", reason.strip().lstrip("- ")))
            out.insert(1, items)
    if decision.assumptions:
        text = f"Assuming: {', '.join(decision.assumptions)}."
        out.append(nodes.paragraph("", text, classes=["attn-assumptions"]))
    if alternatives is not None:
        out += _alternative_nodes(alternatives)
    return out


def _alternative_nodes(alternatives: list[Alternative]) -> list[nodes.Node]:
    """What would change the pick: each smallest change of a fact the decision read,
    with vLLM's pick then (or that no change of them does)."""
    if not alternatives:
        text = "No single change of the facts it read (nor two together) changes the pick."
        return [nodes.paragraph("", text, classes=["attn-alternatives"])]
    items = nodes.bullet_list(classes=["attn-alternatives"])
    for alternative in alternatives:
        flags, pick = alternative_parts(alternative)
        para = nodes.paragraph("", "With ")
        para += nodes.literal(flags, flags)  # (literal: the flags' "--" stay as typed)
        para += nodes.Text(": ")
        para += nodes.literal(pick, pick)
        items += nodes.list_item("", para)
    return [nodes.paragraph("", "What would change the pick:", classes=["attn-pick"]), items]


__all__ = ["HEADER", "SELECTED_CLASS", "decision_nodes"]
