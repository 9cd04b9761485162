"""``:platform:`` on the directives: another platform's selection and feature tables,
from the platform analysis (analysis.platform_part), which holds only what the
directive shows."""

from __future__ import annotations

import copy
import dataclasses
from typing import TYPE_CHECKING

from docutils import nodes

from sphinxext_attn.model.platform import gpu_header
from sphinxext_attn.model.records import Analysis
from sphinxext_attn.render import nodes as render
from sphinxext_attn.render.nodes import TableSpec
from sphinxext_attn.render.platform_section import (
    PLATFORM_TABLES,
    features_intro,
    gpus_nodes,
    intro_text,
    rules_nodes,
)
from sphinxext_attn.render.priority import priority_nodes

if TYPE_CHECKING:
    from sphinxext_attn.sphinx.directive_base import AttentionBackendsDirective
    from sphinxext_attn.sphinx.directives import PriorityDirective


def platform_priority_nodes(
    directive: PriorityDirective,
    analysis: Analysis,
    spec: TableSpec,
    backends: frozenset[str] | None,
) -> list[nodes.Node]:
    """ROCm: its lists (``:arch: gfx942`` picks the groups holding that GPU) and the
    GPUs each backend accepts; XPU, CPU: the rules of ``get_attn_backend_cls``."""
    selection = analysis.selection
    if selection.error:
        raise render.RenderError(f"the {selection.title} selection: {selection.error}")
    if selection.rules:
        return [rules_nodes(selection)]
    wanted = directive.options.get("arch")
    shown = dataclasses.replace(analysis, priorities=selection.lists)
    groups = [p.arch for p in selection.lists]
    arches = None
    if wanted:
        arches = [g for g in dict.fromkeys(groups) if set(g.split("+")) & set(wanted)]
        if not arches:
            raise render.RenderError(
                f"unknown :arch: {', '.join(wanted)}; this tree's {selection.title} "
                f"lists are for {', '.join(dict.fromkeys(groups))}"
            )
    out: list[nodes.Node] = directive.render_lists(shown, spec, backends, arches)
    if "category" not in directive.options and not wanted:
        out.append(gpus_nodes(selection))
    return out


def platform_page_nodes(
    directive: AttentionBackendsDirective,
    analysis: Analysis,
    spec: TableSpec,
    backends: frozenset[str] | None,
) -> list[nodes.Node]:
    """``attention-backends`` on another platform: how it selects (its lists or
    rules), then the feature tables of the backends it can reach."""
    selection = analysis.selection
    if selection.error:
        raise render.RenderError(f"the {selection.title} selection: {selection.error}")
    title = selection.title
    plain = TableSpec(classes=spec.classes)
    out: list[nodes.Node] = [
        render.rubric(f"Backend Selection ({title})"),
        render.paragraph(intro_text(selection)),
    ]
    if selection.rules:
        out.append(rules_nodes(selection))
    else:
        out += priority_nodes(
            analysis, plain, categories=("standard", "mla"), backends=backends, layout="lists"
        )
    out.append(render.paragraph(features_intro(selection)))
    # the CUDA tables hold the backends' targets; these rows link to nothing new
    deco = copy.copy(directive.deco)
    if hasattr(deco, "targets"):
        deco.targets = False
    for table, heading in PLATFORM_TABLES:
        if not analysis.rows(table):
            continue
        out.append(render.rubric(f"{heading} ({title})"))
        tables = render.feature_nodes(
            analysis, table, spec, columns=directive.columns(), backends=backends, deco=deco
        )
        platform_headers(analysis, tables)
        out += tables
    return out


def platform_headers(analysis: Analysis, out: list[nodes.Node]) -> None:
    """The capability column in the platform's terms: ``GPUs`` on ROCm."""
    header = gpu_header(analysis)
    if header == "Compute Cap.":
        return
    for table in out:
        if not isinstance(table, nodes.table):
            continue
        for head in table.findall(nodes.thead):
            for text in list(head.findall(nodes.Text)):
                if str(text) == "Compute Cap.":
                    text.parent.replace(text, nodes.Text(header))
