"""``attention-backends-select``: vLLM's decision for one configuration, in a table.

The decision is the command line's (:class:`~sphinxext_attn.select.decision.Selector`)
on the same tree. The evaluator reads files through the analysis's own
:class:`SourceTree` when the build has one, so a file is parsed once per build;
every file the decision read becomes a dependency of the page.
"""

from __future__ import annotations

import os
import re
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives

from sphinxext_attn.model.records import Analysis
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.render.select_nodes import decision_nodes
from sphinxext_attn.select.decision import (
    ATTN_TYPES,
    DTYPE_NAMES,
    LAYER_FIELDS,
    OPTION_FIELDS,
    Config,
    Selector,
)
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.sphinx import cache
from sphinxext_attn.sphinx.directives import AttentionBackendsDirective
from sphinxext_attn.sphinx.options import COMMON_OPTIONS


def capability_option(value: str | None) -> str:
    text = (value or "").strip()
    if not re.fullmatch(r"\d{1,2}\.\d", text):
        raise ValueError(f"{text or 'nothing'} is not a compute capability; give e.g. 9.0 or 12.0")
    return text


def dtype_option(value: str | None) -> str:
    text = (value or "").strip().lower()
    if text not in DTYPE_NAMES:
        raise ValueError(f"{text or 'nothing'} unknown; choose from {', '.join(DTYPE_NAMES)}")
    return text


def attn_type_option(value: str | None) -> str:
    text = (value or "").strip().upper().replace("-", "_")
    if text not in ATTN_TYPES:
        raise ValueError(f"{text or 'nothing'} unknown; choose from {', '.join(ATTN_TYPES)}")
    return text


def kv_dtype_option(value: str | None) -> str:
    text = (value or "").strip()
    if not re.fullmatch(r"[A-Za-z0-9_]+", text):
        raise ValueError("give a KV cache dtype such as auto, fp8 or bfloat16")
    return text


#: The configuration options of ``attention-backends-select``: one value each
#: (the selector takes the same names, each narrowing to several values).
CONFIG_OPTIONS: dict[str, Any] = {
    "capability": capability_option,
    "dtype": dtype_option,
    "kv-cache-dtype": kv_dtype_option,
    "head-size": directives.positive_int,
    "block-size": directives.positive_int,
    "num-heads": directives.positive_int,
    "attn-type": attn_type_option,
    "mla": directives.flag,
    "sparse": directives.flag,
    "sink": directives.flag,
    "mm-prefix": directives.flag,
    "non-causal": directives.flag,
    "kv-connector": directives.flag,
}


def config_from_options(options: dict[str, Any]) -> Config:
    """The configuration the options give; a flag option set alone means true."""
    fields = Config.__dataclass_fields__
    values: dict[str, Any] = {}
    for option, name in {**OPTION_FIELDS, **LAYER_FIELDS}.items():
        if option in options:
            flag = fields[name].type in ("bool", bool)
            values[name] = True if flag else options[option]
    return Config(**values)


def selector_for(root: str) -> Selector:
    """One selector per tree and read phase, on the analysis's parsed files."""
    selector: Selector | None = cache.SELECTORS.get(root)
    if selector is None:
        tree = cache.source_tree(root) or SourceTree(root, cache.shared_reads(root))
        selector = cache.SELECTORS[root] = Selector(Interpreter(tree))
    return selector


class SelectDirective(AttentionBackendsDirective):
    """``attention-backends-select``: the decision for the configuration in the options."""

    option_spec = {
        **{k: v for k, v in COMMON_OPTIONS.items() if k not in ("backends", "profile")},
        **CONFIG_OPTIONS,
    }

    def analysis_of(self, root: str, profile: str | None = None) -> Analysis:
        self.options.pop("profile", None)  # the selection is what runs: always runtime
        return super().analysis_of(root, profile)

    def render(self, analysis, spec, backends):  # type: ignore[no-untyped-def]
        selector = selector_for(analysis.root)
        config = config_from_options(self.options)
        decision = selector.explain(selector.decide(config))
        for rel in selector.interp.tree.files:
            path = os.path.join(analysis.root, rel)
            if os.path.isfile(path):
                self.env.note_dependency(path)
        if decision.error and not decision.priorities:
            location = self.get_location()
            cache.logger.warning(
                f"{self.name}: the selection could not be evaluated: {decision.error}",
                location=location,
                type=cache.WARNING_TYPE,
                subtype="unknown",
            )
        return decision_nodes(config, decision, spec, deco=self.deco)

    def not_analysed(self, analysis: Analysis) -> list[nodes.Node]:
        return []
