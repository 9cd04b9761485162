"""``attention-backends-diff``: what changed from one vLLM tree to another, as tables.

``:from:`` and ``:to:`` each name a tree of ``attention_backends_trees`` or a
path (relative to the page, like ``:root:``); each defaults to the build's
tree. ``:from-profile:`` and ``:to-profile:`` read a side in another profile:
``:from-profile: vllm-page`` alone shows where vLLM's own page and the code
disagree on one tree, with the line that decides each runtime cell. Both
analyses come from the shared cache, and the page depends on the files of
both, so it is re-rendered when either tree changes.
"""

from __future__ import annotations

import os

from docutils import nodes
from docutils.parsers.rst import directives

from sphinxext_attn.model.diff import Change, backends_added, backends_removed, diff, label
from sphinxext_attn.model.records import Analysis
from sphinxext_attn.render import diffout
from sphinxext_attn.render import nodes as render
from sphinxext_attn.sphinx import config, trees
from sphinxext_attn.sphinx.directive_base import AttentionBackendsDirective
from sphinxext_attn.sphinx.options import COMMON_OPTIONS, profile_option
from sphinxext_attn.sphinx.provenance import SphinxDecorations


class DiffDirective(AttentionBackendsDirective):
    """Backends added and removed, then every changed cell, priority list and prefill row."""

    option_spec = {
        **{k: v for k, v in COMMON_OPTIONS.items() if k not in ("root", "widths")},
        "from": directives.unchanged,
        "to": directives.unchanged,
        "from-profile": profile_option,
        "to-profile": profile_option,
    }

    def run(self) -> list[nodes.Node]:
        profiles = self.options.get("from-profile"), self.options.get("to-profile")
        if not self.options.get("from") and not any(profiles):
            raise self.error(
                f"{self.name}: give :from: (a path or a name of {self._names()}), "
                "or :from-profile: to compare two readings of one tree"
            )
        build_root = trees.build_root(self.env)
        old_root = self.tree(self.options["from"]) if self.options.get("from") else build_root
        new_root = self.tree(self.options["to"]) if self.options.get("to") else build_root
        if old_root is None or new_root is None:
            trees.warn_no_root(self.env)
            return []
        old = self.analysis_of(old_root, profiles[0])
        new = self.analysis_of(new_root, profiles[1])
        self.deco = SphinxDecorations(
            self.env, new.version, root=new.root, template=self.options.get("source-url")
        )
        self.compared_profiles = any(profiles)
        changes = diff(old, new)
        wanted = self.options.get("backends")
        if wanted:
            changes = [c for c in changes if c.backend in wanted]
        return self.labelled(self.diff_nodes(old, new, changes))

    compared_profiles = False

    def _label(self, analysis: Analysis, side: int) -> str:
        profile = self.options.get(("from-profile", "to-profile")[side])
        return f"{label(analysis)} ({profile})" if profile else label(analysis)

    def _names(self) -> str:
        trees = getattr(self.env, "attention_backends_trees", None) or {}
        return ", ".join(sorted(trees)) or f"{config.TREES_NAME}, which is empty"

    def tree(self, value: str) -> str:
        named = trees.named_tree(self.env, value)
        if named is not None:
            return named
        docdir = os.path.dirname(self.env.doc2path(self.env.docname))
        path = trees.directive_root(value, docdir)
        if not os.path.isdir(os.path.join(path, "vllm")):
            raise self.error(
                f"{self.name}: {value!r} is neither a tree name ({self._names()}) "
                f"nor a folder holding vllm/ ({path})"
            )
        return path

    def decided_at(self, new: Analysis, row: tuple[str, ...]) -> render.Cell:
        """The line the ``to`` side's cell was decided on, linked or as a tooltip."""
        name, version, column = row[0], row[1], row[2]
        for feature in new.backends:
            if feature.name == name and feature.version == version:
                where = feature.sources.get(column)
                if where is not None:
                    text = str(where)  # a literal: LaTeX may break it after a slash
                    return self.deco.source(where, [nodes.literal(text, text)])
        return ""

    def diff_nodes(self, old: Analysis, new: Analysis, changes: list[Change]) -> list[nodes.Node]:
        spec = render.TableSpec(classes=list(self.options.get("class", [])))
        caption = (
            self.options.get("caption")
            or f"Changes from {self._label(old, 0)} to {self._label(new, 1)}"
        )
        out: list[nodes.Node] = [render.rubric(caption)]
        for title, names in (
            ("Backends added", backends_added(old, new)),
            ("Backends removed", backends_removed(old, new)),
        ):
            para = nodes.paragraph("", "", nodes.strong(title + ":", title + ":"), nodes.Text(" "))
            para.extend(render.literal_list(names) if names else [nodes.Text("none")])
            out.append(para)
        for title, header, rows in (
            ("Feature changes", diffout.FEATURE_HEADER, diffout.feature_rows(changes)),
            ("Priority changes", diffout.PRIORITY_HEADER, diffout.priority_rows(changes)),
            ("MLA prefill changes", diffout.PREFILL_HEADER, diffout.prefill_rows(changes)),
        ):
            if not rows:
                continue
            body: list[list[render.Cell]] = [
                [[nodes.literal(r[0], r[0])], *r[1:]] if r[0] else list(r) for r in rows
            ]
            if title == "Feature changes" and self.compared_profiles:
                header = (*header, "Decided at")
                body = [[*b, self.decided_at(new, r)] for b, r in zip(body, rows, strict=True)]
            out.append(
                render.build_table(list(header), body, spec, title=title, classes=("attn-diff",))
            )
        if not changes:
            out.append(nodes.paragraph("", "No table changed."))
        return out
