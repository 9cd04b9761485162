"""``:platform:`` on the priority directive: another platform's selection, evaluated
only when a page asks for it."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from docutils import nodes

from sphinxext_attn.model.records import Analysis
from sphinxext_attn.render import nodes as render
from sphinxext_attn.render.nodes import TableSpec
from sphinxext_attn.render.platform_section import gpus_nodes, rules_nodes
from sphinxext_attn.select.platforms import platform_selection

if TYPE_CHECKING:
    from sphinxext_attn.sphinx.directives import PriorityDirective


def platform_priority_nodes(
    directive: PriorityDirective,
    analysis: Analysis,
    spec: TableSpec,
    backends: frozenset[str] | None,
    platform: str,
) -> list[nodes.Node]:
    """ROCm: its lists (``:arch: gfx942`` picks the groups holding that GPU) and the
    GPUs each backend accepts; XPU, CPU: the rules of ``get_attn_backend_cls``."""
    wanted = directive.options.get("arch")
    # one GPU named: only its machine is explored (every GPU's lists cost one run each)
    arch = wanted[0] if wanted and len(wanted) == 1 and wanted[0].startswith("gfx") else ""
    environment = dataclasses.replace(directive.environment(), platform=platform, arch=arch)
    selection = platform_selection(analysis.root, environment)
    if selection.error:
        raise render.RenderError(f"the {selection.title} selection: {selection.error}")
    if selection.rules:
        return [rules_nodes(selection)]
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
