"""The whole page in docutils nodes: every table in the seed's order.

Apart from :mod:`.nodes` (the tables' building blocks) because it also places
the priority lists (:mod:`.priority`), which are built from those blocks.
"""

from __future__ import annotations

from collections.abc import Sequence

from docutils import nodes

from sphinxext_attn.model.records import CATEGORIES, Analysis
from sphinxext_attn.render import prose
from sphinxext_attn.render.decorate import PLAIN, Decorations
from sphinxext_attn.render.nodes import (
    TableSpec,
    family_nodes,
    feature_nodes,
    legend_nodes,
    paragraph,
    prefill_nodes,
    rubric,
)
from sphinxext_attn.render.priority import DEFAULT_LAYOUT, priority_nodes

PRIORITY_HEADING = "Backend Priority (CUDA)"
LEGEND_HEADING = "Legend"
STANDARD_HEADING = "Standard Attention (MHA, MQA, GQA) Backends"
MLA_HEADING = "MLA (Multi-head Latent Attention) Backends"
MLA_INTRO = "MLA uses separate backends for prefill and decode phases."
PREFILL_HEADING = "Prefill Backends"
DECODE_HEADING = "Decode Backends"


def page_nodes(
    analysis: Analysis,
    spec: TableSpec,
    *,
    columns: Sequence[str] | None = None,
    backends: frozenset[str] | None = None,
    deco: Decorations = PLAIN,
    layout: str | None = None,
) -> list[nodes.Node]:
    """Every table in the seed's order, under rubrics (a directive cannot open sections).

    ``columns`` and explicit ``widths`` concern the two feature tables; the
    other tables keep their own columns and automatic widths; ``layout`` is the
    priority lists' (:data:`.priority.DEFAULT_LAYOUT` when None).
    """
    layout = layout or DEFAULT_LAYOUT
    plain = TableSpec(
        widths=spec.widths if isinstance(spec.widths, str) else None, classes=spec.classes
    )
    out: list[nodes.Node] = [
        rubric(PRIORITY_HEADING),
        paragraph(prose.PRIORITY_INTRO),
        paragraph(prose.PRIORITY_ONE),
    ]
    out += priority_nodes(
        analysis, plain, categories=CATEGORIES, backends=backends, deco=deco, layout=layout
    )
    out.append(nodes.note("", paragraph(prose.PRIORITY_NOTE)))
    out += [
        rubric(LEGEND_HEADING),
        *legend_nodes(plain, analysis.legend_columns(), evaluated=analysis.profile == "runtime"),
    ]
    out.append(rubric(STANDARD_HEADING))
    out += feature_nodes(analysis, "standard", spec, columns=columns, backends=backends, deco=deco)
    out += family_nodes(analysis, "minimax", spec, columns=columns, backends=backends, deco=deco)
    out += [rubric(MLA_HEADING), paragraph(MLA_INTRO), rubric(PREFILL_HEADING)]
    out.append(paragraph(prose.PREFILL_INTRO))
    out += prefill_nodes(analysis, plain, backends=backends, deco=deco)
    out.append(rubric(DECODE_HEADING))
    out += feature_nodes(analysis, "mla", spec, columns=columns, backends=backends, deco=deco)
    out += family_nodes(analysis, "dsv4", spec, columns=columns, backends=backends, deco=deco)
    return out
