"""The base of the directive family: the shared options, finding the analysis,
and what every table says under itself.

Subclasses (:mod:`.directives`) only say which columns they allow and which
nodes they render. Option values that can be checked without the tree are
checked by docutils option converters (their messages list the allowed
values); the rest (``:backends:``, ``:widths:`` length) become ``self.error``
with the same courtesy.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import ClassVar

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from sphinxext_attn.model.columns import EXTRA_COLUMNS, FEATURE_COLUMNS, RUNTIME_COLUMNS
from sphinxext_attn.model.environment import Environment, environment_from, known_platforms
from sphinxext_attn.model.records import Analysis
from sphinxext_attn.render import nodes as render
from sphinxext_attn.render.decorate import PLAIN, Decorations
from sphinxext_attn.selection.option_fields import OptionError, check_options
from sphinxext_attn.sphinx import cache, config, trees
from sphinxext_attn.sphinx.build_state import state_of
from sphinxext_attn.sphinx.options import COMMON_OPTIONS, columns_option
from sphinxext_attn.sphinx.provenance import SphinxDecorations


class AttentionBackendsDirective(SphinxDirective):
    """Shared base of the family (in the manner of sphinx-design's directives)."""

    has_content = False
    required_arguments = 0
    optional_arguments = 0
    final_argument_whitespace = False
    #: feature-table columns any release may have; each tree narrows the extras to
    #: those its backend interface declares (:meth:`check_columns`)
    allowed_columns: ClassVar[Sequence[str]] = (*FEATURE_COLUMNS, *EXTRA_COLUMNS, *RUNTIME_COLUMNS)
    option_spec = {**COMMON_OPTIONS, "columns": columns_option(allowed_columns)}
    #: ``:columns:`` names feature-table columns (not priority, prefill, legend ones)
    feature_columns: ClassVar[bool] = True

    #: the legend is fixed text and renders without a tree
    needs_tree: ClassVar[bool] = True
    #: which left-out registry entries are listed under the output: all, standard, mla
    notes_for: ClassVar[str | None] = None
    #: source links/tooltips, row targets and priority links (set in :meth:`rendered`)
    deco: Decorations = PLAIN

    def run(self) -> list[nodes.Node]:
        if not self.needs_tree:
            return self.rendered(Analysis(root=""), None)
        root = self.tree_root()
        if root is None:
            trees.warn_no_root(self.env)
            return []
        problem = self.unhonoured(root)
        if problem:
            raise self.error(problem)
        analysis = self.analysis_of(root)
        if not analysis.files and any(d.subtype == "root" for d in analysis.diagnostics):
            return []  # no vllm/ under the root: reported once, nothing to show
        return self.rendered(analysis, self.backends(analysis))

    def environment(self) -> Environment:
        """conf.py's environment with this directive's ``:env:``/``:option:``/``:assume:``
        and ``:platform:`` over it."""
        base = config.environment(self.env)
        platform = self.options.get("platform") or base.platform
        plugins = state_of(self.env).every_plugin
        if platform not in known_platforms(plugins):
            raise self.error(
                f":platform: {platform!r}: give one of {', '.join(known_platforms(plugins))} "
                "(a plugin's platform needs the plugin in attention_backends_plugins)"
            )
        own = environment_from(
            self.options.get("env"),
            self.options.get("option"),
            self.options.get("assume"),
            platform,
            plugins=plugins,
        )
        return base.merged(own)

    def unhonoured(self, root: str) -> str | None:
        """An option that would be accepted and then ignored: an engine option the
        tree's config does not have (or a value it does not allow), a ROCm GPU on
        another platform, a capability where the platform derives its own."""
        own = self.options.get("option")
        if own:
            try:
                tree = cache.source_tree(self.env, root)
                check_options(root, own, ":option:", tree)
            except OptionError as exc:
                return str(exc)
        platform = self.environment().platform
        arches = self.options.get("arch") or ()
        gfx = [a for a in ([arches] if isinstance(arches, str) else arches) if a[:3] == "gfx"]
        if gfx and platform != "rocm":
            return (
                f":arch: {', '.join(gfx)} names a ROCm GPU, but the platform is {platform}; "
                "add :platform: rocm"
            )
        if "capability" in self.options and platform != "cuda":
            return (
                f":capability: {self.options['capability']} does not apply on {platform} "
                "(the platform's code derives its own; on ROCm name the GPU with :arch:)"
            )
        return None

    #: on another platform, what this directive shows of it (analysis.platform_part:
    #: ``bare``, ``lists``, ``features``); None: the CUDA analysis in that environment
    platform_what: ClassVar[str | None] = None

    def analysis_environment(self) -> Environment:
        """The environment the analysis is keyed by (the priority directive narrows
        another platform's GPUs to the one ``:arch:`` names). A directive that shows
        nothing of another platform (legend, prefill, family, diff, selector) shows
        CUDA's tables, evaluated on CUDA, whatever the platform setting."""
        environment = self.environment()
        if environment.platform != "cuda" and self.platform_what is None:
            return Environment(environment.env, environment.options, environment.assume)
        return environment

    def analysis_of(self, root: str, profile: str | None = None) -> Analysis:
        """The shared analysis of ``root``; this page depends on its files from now on.
        On another platform, only what the directive shows of it is evaluated."""
        profile = profile or self.options.get("profile") or config.profile(self.env)
        environment = self.analysis_environment()
        part = ""
        if environment.platform != "cuda" and self.platform_what is not None:
            part = self.platform_what
        key = state_of(self.env).key(root, profile, environment, part)
        analysis = cache.get_analysis(self.env, key)
        cache.report(self.env, root, analysis, self.get_location(), strict=config.strict(self.env))
        cache.env_docs(self.env).setdefault(self.env.docname, set()).add(key)
        for rel in analysis.files:
            path = os.path.join(root, rel)
            if os.path.isfile(path):  # a missing file would make the page always stale
                self.env.note_dependency(path)
        return analysis

    def check_columns(self, analysis: Analysis) -> None:
        """A capability column is offered where the release's interface asks it."""
        wanted = self.options.get("columns") or ()
        if not self.feature_columns:
            return
        allowed = analysis.column_choices()
        bad = [c for c in wanted if c not in allowed]
        if bad:
            raise self.error(
                f"{self.name}: column(s) {', '.join(bad)} not in this release's backend "
                f"interface; choose from {', '.join(allowed)}"
            )

    def rendered(self, analysis: Analysis, backends: frozenset[str] | None) -> list[nodes.Node]:
        if self.needs_tree:
            self.check_columns(analysis)
            self.deco = SphinxDecorations(
                self.env,
                analysis.version,
                root=analysis.root,
                template=self.options.get("source-url"),
            )
        try:
            out = self.render(analysis, self.spec(), backends)
        except render.RenderError as err:
            raise self.error(f"{self.name}: {err}") from None
        if backends is None:
            out += self.not_analysed(analysis)
        return self.labelled(out)

    def not_analysed(self, analysis: Analysis) -> list[nodes.Node]:
        """ "Not analysed: NAME (why)" under a table the release's problems leave short,
        and "Not evaluated: NAME Column (why)" for the ``?`` cells of its rows."""
        wanted = self.notes_for
        left_out = [
            (name, why)
            for name, why in cache.not_analysed(analysis)
            if wanted == "all"
            or (wanted is not None and ("mla" in name.lower()) == (wanted == "mla"))
        ]
        unknown = [
            (f"{name} {column}", why)
            for name, column, why, is_mla in cache.not_evaluated(analysis)
            if wanted == "all" or (wanted is not None and is_mla == (wanted == "mla"))
        ]
        out: list[nodes.Node] = []
        for title, items, kind in (
            ("Not analysed: ", left_out, "attn-not-analysed"),
            ("Not evaluated: ", unknown, "attn-not-evaluated"),
        ):
            if not items:
                continue
            para = nodes.paragraph("", title, classes=[kind])
            for i, (name, why) in enumerate(items):
                para += [nodes.Text("; " if i else ""), nodes.literal(name, name)]
                para += nodes.Text(f" ({why})")
            para += nodes.Text(".")
            out.append(para)
        return out

    def spec(self) -> render.TableSpec:
        return render.TableSpec(
            widths=self.options.get("widths"),
            classes=list(self.options.get("class", [])),
            caption=self.options.get("caption"),
        )

    # -- hooks ------------------------------------------------------------------

    def render(
        self, analysis: Analysis, spec: render.TableSpec, backends: frozenset[str] | None
    ) -> list[nodes.Node]:
        raise NotImplementedError

    def known_backends(self, analysis: Analysis) -> list[str]:
        return sorted({b.name for b in analysis.backends})

    # -- helpers ----------------------------------------------------------------

    def tree_root(self) -> str | None:
        value = self.options.get("root")
        if value:
            docdir = os.path.dirname(self.env.doc2path(self.env.docname))
            return trees.directive_root(value, docdir)
        return trees.build_root(self.env)

    def backends(self, analysis: Analysis) -> frozenset[str] | None:
        wanted = self.options.get("backends")
        if wanted is None:
            return None
        known = self.known_backends(analysis)
        unknown = [w for w in wanted if w not in known]
        if unknown:
            raise self.error(
                f"{self.name}: unknown backend(s) {', '.join(unknown)}; "
                f"choose from {', '.join(known)}"
            )
        return frozenset(wanted)

    def columns(self) -> tuple[str, ...] | None:
        columns: tuple[str, ...] | None = self.options.get("columns")
        return columns

    def labelled(self, out: list[nodes.Node]) -> list[nodes.Node]:
        """``:name:`` on the table when there is one, else on a wrapping container."""
        if "name" not in self.options:
            return out
        tables = [n for n in out if isinstance(n, nodes.table)]
        if len(tables) == 1:
            self.add_name(tables[0])
            return out
        box = nodes.container("", *out, classes=["attn-backends"])
        self.add_name(box)
        return [box]
