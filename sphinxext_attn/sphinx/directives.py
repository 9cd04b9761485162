"""The table directives of the family, by name (:data:`DIRECTIVES`).

Each says which columns it allows and which nodes it renders; parsing the
shared options and finding the analysis is their base's work
(:mod:`.directive_base`).
"""

from __future__ import annotations

from collections.abc import Sequence

from docutils import nodes

from sphinxext_attn.model.columns import LEGEND
from sphinxext_attn.model.environment import Environment
from sphinxext_attn.model.records import CATEGORIES, PREFILL_COLUMNS, Analysis
from sphinxext_attn.render import nodes as render
from sphinxext_attn.render import priority, prose
from sphinxext_attn.render.full_page import page_nodes
from sphinxext_attn.render.nodes import TableSpec
from sphinxext_attn.sphinx import config
from sphinxext_attn.sphinx.directive_base import AttentionBackendsDirective
from sphinxext_attn.sphinx.options import (
    COMMON_OPTIONS,
    arch_option,
    choices_option,
    columns_option,
    one_of,
)
from sphinxext_attn.sphinx.platforms import (
    platform_headers,
    platform_page_nodes,
    platform_priority_nodes,
)

__all__ = [
    "DIRECTIVES",
    "FAMILIES",
    # the family's base, named here too: the selector and other directives subclass it
    "AttentionBackendsDirective",
    "AllTablesDirective",
    "PriorityDirective",
    "LegendDirective",
    "StandardDirective",
    "MLADecodeDirective",
    "MLAPrefillDirective",
    "FamilyDirective",
]


class AllTablesDirective(AttentionBackendsDirective):
    """``attention-backends``: every table in the seed's order."""

    notes_for = "all"
    option_spec = {
        **AttentionBackendsDirective.option_spec,
        "layout": one_of(priority.LAYOUTS),
    }

    platform_what = "features"

    def known_backends(self, analysis: Analysis) -> list[str]:
        names = {b.name for b in analysis.backends}
        names |= {p.name for p in analysis.mla_prefill}
        return sorted(names)

    def render(self, analysis, spec, backends):  # type: ignore[no-untyped-def]
        head = [render.rubric(spec.caption)] if spec.caption else []
        spec.caption = None
        if analysis.platform is not None:
            return head + platform_page_nodes(self, analysis, spec, backends)
        return head + page_nodes(
            analysis,
            spec,
            columns=self.columns(),
            backends=backends,
            deco=self.deco,
            layout=self.options.get("layout"),
        )


class PriorityDirective(AttentionBackendsDirective):
    """``attention-backends-priority``: the CUDA priority lists."""

    feature_columns = False

    option_spec = {
        **COMMON_OPTIONS,
        "columns": columns_option(priority.PRIORITY_COLUMNS),
        "category": choices_option(CATEGORIES),
        "arch": arch_option,
        "layout": one_of(priority.LAYOUTS),
    }

    platform_what = "lists"

    def analysis_environment(self) -> Environment:
        """One GPU named (``:arch: gfx942``): only its machine is explored (every
        GPU's lists cost one exploration each)."""
        environment = self.environment()
        wanted = self.options.get("arch")
        one = wanted[0] if wanted and len(wanted) == 1 else ""
        if environment.platform != "cuda" and one.startswith("gfx"):
            return Environment(
                environment.env, environment.options, environment.assume, environment.platform, one
            )
        return environment

    def known_backends(self, analysis: Analysis) -> list[str]:
        if analysis.platform is not None:
            return sorted(analysis.platform.backends())
        return sorted({b for p in analysis.priorities for b in p.backends})

    def render(self, analysis, spec, backends):  # type: ignore[no-untyped-def]
        if analysis.platform is not None:
            return self.render_platform(analysis, spec, backends)
        return self.render_lists(analysis, spec, backends, self.options.get("arch"))

    def render_platform(
        self, analysis: Analysis, spec: TableSpec, backends: frozenset[str] | None
    ) -> list[nodes.Node]:
        """Another platform's lists (ROCm) or rules (XPU, CPU), from its own code."""

        return platform_priority_nodes(self, analysis, spec, backends)

    def render_lists(
        self,
        analysis: Analysis,
        spec: TableSpec,
        backends: frozenset[str] | None,
        arches: Sequence[str] | None,
    ) -> list[nodes.Node]:
        categories = self.options.get("category", CATEGORIES)
        present = analysis.arches()
        unknown = [a for a in arches or () if a not in present]
        if unknown:
            raise render.RenderError(
                f"unknown :arch: {', '.join(unknown)}; this tree's lists are for "
                f"{', '.join(present) or 'no architecture'}"
            )
        lists = [p for c in categories for p in analysis.priority_lists(c, arches)]
        tables = len({p.category for p in lists}) if self.layout() == "matrix" else len(lists)
        head: list[nodes.Node] = []
        if spec.caption and tables != 1:
            head, spec.caption = [render.rubric(spec.caption)], None
        return head + priority.priority_nodes(
            analysis,
            spec,
            categories=categories,
            arches=arches,
            backends=backends,
            columns=self.columns() or priority.PRIORITY_COLUMNS,
            deco=self.deco,
            headings=len({p.category for p in lists}) > 1,
            layout=self.layout(),
        )

    def layout(self) -> str:
        """``:layout:``; without it, ``lists`` when ``:columns:`` picks list columns."""
        if "layout" in self.options:
            return str(self.options["layout"])
        return "lists" if "columns" in self.options else priority.DEFAULT_LAYOUT


class LegendDirective(AttentionBackendsDirective):
    """``attention-backends-legend``: the columns of the configured release's page
    (the seed's without a tree); ``:columns:`` picks the described columns."""

    feature_columns = False
    needs_tree = False

    option_spec = {
        **COMMON_OPTIONS,
        "columns": columns_option([c for c, _ in LEGEND]),
    }

    def run(self) -> list[nodes.Node]:
        root = None if "columns" in self.options else self.tree_root()
        if root is None:
            return super().run()  # fixed text, no tree needed
        return self.rendered(self.analysis_of(root), None)

    def render(self, analysis, spec, backends):  # type: ignore[no-untyped-def]
        default = analysis.legend_columns() if analysis.root else prose.SEED_LEGEND_COLUMNS
        profile = self.options.get("profile") or config.profile(self.env)
        return render.legend_nodes(spec, self.columns() or default, evaluated=profile == "runtime")


class StandardDirective(AttentionBackendsDirective):
    """``attention-backends-standard``: MHA/MQA/GQA backends and their footnotes."""

    notes_for = "standard"
    platform_what = "features"
    table = "standard"

    def known_backends(self, analysis: Analysis) -> list[str]:
        return sorted({b.name for b in analysis.rows(self.table)})

    def render(self, analysis, spec, backends):  # type: ignore[no-untyped-def]
        selection = analysis.platform
        if selection is not None and selection.error:
            raise render.RenderError(f"the {selection.title} selection: {selection.error}")
        if selection is not None and not analysis.rows(self.table):
            return [render.paragraph(f"{selection.title}'s selection reaches no backend here.")]
        out = render.feature_nodes(
            analysis, self.table, spec, columns=self.columns(), backends=backends, deco=self.deco
        )
        if analysis.platform is not None:
            platform_headers(analysis, out)
        return out


class MLADecodeDirective(StandardDirective):
    """``attention-backends-mla-decode``: the MLA decode backends."""

    notes_for = "mla"
    table = "mla"


class MLAPrefillDirective(AttentionBackendsDirective):
    """``attention-backends-mla-prefill``: the MLA prefill backends (+ the ``‡`` note)."""

    feature_columns = False

    option_spec = {**COMMON_OPTIONS, "columns": columns_option(PREFILL_COLUMNS)}

    def known_backends(self, analysis: Analysis) -> list[str]:
        return [p.name for p in analysis.mla_prefill]

    def render(self, analysis, spec, backends):  # type: ignore[no-untyped-def]
        return render.prefill_nodes(
            analysis, spec, columns=self.columns(), backends=backends, deco=self.deco
        )


class FamilyDirective(AttentionBackendsDirective):
    """``attention-backends-family dsv4|minimax``: a model family's own table (newer vLLM).

    Renders nothing when the tree has no such rows (older releases).
    """

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        if self.arguments[0] not in FAMILIES:
            raise self.error(
                f"{self.name}: unknown family {self.arguments[0]!r}; "
                f"choose from {', '.join(FAMILIES)}"
            )
        return super().run()

    def known_backends(self, analysis: Analysis) -> list[str]:
        return sorted({b.name for b in analysis.rows(self.arguments[0])})

    def render(self, analysis, spec, backends):  # type: ignore[no-untyped-def]
        return render.family_nodes(
            analysis,
            self.arguments[0],
            spec,
            columns=self.columns(),
            backends=backends,
            headings=False,
            deco=self.deco,
        )


FAMILIES: tuple[str, ...] = tuple(prose.FAMILY_TABLES)

DIRECTIVES: dict[str, type[AttentionBackendsDirective]] = {
    "attention-backends": AllTablesDirective,
    "attention-backends-priority": PriorityDirective,
    "attention-backends-legend": LegendDirective,
    "attention-backends-standard": StandardDirective,
    "attention-backends-mla-prefill": MLAPrefillDirective,
    "attention-backends-mla-decode": MLADecodeDirective,
    "attention-backends-family": FamilyDirective,
}
