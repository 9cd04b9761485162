"""``attention-backends-diff``: what changed from one vLLM tree to another, as tables.

``:from:`` and ``:to:`` each name a tree of ``attention_backends_trees`` or a
path (relative to the page, like ``:root:``); ``:to:`` defaults to the
build's tree. Both analyses come from the shared cache, and the page depends
on the files of both, so it is re-rendered when either tree changes.
"""

from __future__ import annotations

import os

from docutils import nodes
from docutils.parsers.rst import directives

from sphinxext_attn.core.diff import Change, backends_added, backends_removed, diff, label
from sphinxext_attn.core.models import Analysis
from sphinxext_attn.render import diffout
from sphinxext_attn.render import nodes as render
from sphinxext_attn.sphinx import config
from sphinxext_attn.sphinx.directives import AttentionBackendsDirective
from sphinxext_attn.sphinx.options import COMMON_OPTIONS


class DiffDirective(AttentionBackendsDirective):
    """Backends added and removed, then every changed cell, priority list and prefill row."""

    option_spec = {
        **{k: v for k, v in COMMON_OPTIONS.items() if k not in ("root", "widths")},
        "from": directives.unchanged_required,
        "to": directives.unchanged,
    }

    def run(self) -> list[nodes.Node]:
        if not self.options.get("from"):
            raise self.error(f"{self.name}: give :from: (a path or a name of {self._names()})")
        old_root = self.tree(self.options["from"])
        new_root = self.tree(self.options["to"]) if self.options.get("to") else None
        if new_root is None:
            new_root = config.build_root(self.env)
            if new_root is None:
                config.warn_no_root()
                return []
        old, new = self.analysis_of(old_root), self.analysis_of(new_root)
        changes = diff(old, new)
        wanted = self.options.get("backends")
        if wanted:
            changes = [c for c in changes if c.backend in wanted]
        return self.labelled(self.diff_nodes(old, new, changes))

    def _names(self) -> str:
        trees = getattr(self.env, "attention_backends_trees", None) or {}
        return ", ".join(sorted(trees)) or f"{config.TREES_NAME}, which is empty"

    def tree(self, value: str) -> str:
        named = config.named_tree(self.env, value)
        if named is not None:
            return named
        docdir = os.path.dirname(self.env.doc2path(self.env.docname))
        path = config.directive_root(value, docdir)
        if not os.path.isdir(os.path.join(path, "vllm")):
            raise self.error(
                f"{self.name}: {value!r} is neither a tree name ({self._names()}) "
                f"nor a folder holding vllm/ ({path})"
            )
        return path

    def diff_nodes(self, old: Analysis, new: Analysis, changes: list[Change]) -> list[nodes.Node]:
        spec = render.TableSpec(classes=list(self.options.get("class", [])))
        caption = self.options.get("caption") or f"Changes from {label(old)} to {label(new)}"
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
            out.append(
                render.build_table(list(header), body, spec, title=title, classes=("attn-diff",))
            )
        if not changes:
            out.append(nodes.paragraph("", "No table changed."))
        return out
