"""``attention-backends-select``: vLLM's decision for one configuration, in a table.

The decision is the command line's (:class:`~sphinxext_attn.selection.decision.Selector`)
on the same tree. The evaluator reads files through the analysis's own
:class:`SourceTree` when the build has one, so a file is parsed once per build;
every file the decision read becomes a dependency of the page.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from docutils import nodes
from docutils.parsers.rst import directives

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.environment import REFERENCE, Environment, gpu_words
from sphinxext_attn.model.json_value import JsonObject
from sphinxext_attn.model.records import Analysis
from sphinxext_attn.model.selection import (
    LAYER_FIELDS,
    OPTION_FIELDS,
    Alternative,
    Config,
    Decision,
)
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.render import nodes as render
from sphinxext_attn.render.select_nodes import decision_nodes
from sphinxext_attn.runtime.questions import kv_cache_dtypes
from sphinxext_attn.selection import inputs
from sphinxext_attn.selection.alternatives import alternatives
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.selection.fa_version import flash_attn_version
from sphinxext_attn.selection.requested import check_backend
from sphinxext_attn.sphinx import cache
from sphinxext_attn.sphinx.build_state import state_of
from sphinxext_attn.sphinx.directive_base import AttentionBackendsDirective
from sphinxext_attn.sphinx.model_select import model_nodes, model_path
from sphinxext_attn.sphinx.options import COMMON_OPTIONS, gfx_option

if TYPE_CHECKING:
    from sphinx.environment import BuildEnvironment


T = TypeVar("T")


def _option(convert: Callable[[str | None], T]) -> Callable[[str | None], T]:
    """A shared converter (:mod:`sphinxext_attn.selection.inputs`) as an option converter."""

    def option(value: str | None) -> T:
        return convert(value)

    option.__doc__ = convert.__doc__
    return option


capability_option = _option(inputs.capability)
dtype_option = _option(inputs.dtype)
attn_type_option = _option(inputs.attn_type)
kv_dtype_option = _option(inputs.kv_cache_dtype)
positive_int_option = _option(inputs.positive_int)


#: The configuration options of ``attention-backends-select``: one value each
#: (the selector takes the same names, each narrowing to several values).
CONFIG_OPTIONS: dict[str, Any] = {
    "capability": capability_option,
    "dtype": dtype_option,
    "kv-cache-dtype": kv_dtype_option,
    "head-size": positive_int_option,
    "block-size": positive_int_option,
    "num-heads": positive_int_option,
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


def selector_for(
    env: BuildEnvironment, root: str, environment: Environment = REFERENCE
) -> Selector:
    """One selector per tree, environment and read phase, on the analysis's parsed files."""
    key = state_of(env).key(root, "runtime", environment)
    selectors = state_of(env).phase.selectors
    selector = selectors.get(key)
    if selector is None:
        interp = Interpreter(cache.source_tree(env, root), Machine(environment))
        selector = selectors[key] = Selector(interp)
    return selector


class SelectDirective(AttentionBackendsDirective):
    """``attention-backends-select``: the decision for the configuration in the options."""

    option_spec = {
        **{k: v for k, v in COMMON_OPTIONS.items() if k not in ("backends", "profile")},
        **CONFIG_OPTIONS,
        "arch": gfx_option,
        "backend": _option(inputs.backend),
        "model-config": directives.unchanged_required,
        "alternatives": directives.flag,
    }

    #: on another platform the decision asks its own questions: no analysis runs
    platform_what = "bare"
    #: an argument is taken only to say that the configuration goes in options
    optional_arguments = 1
    final_argument_whitespace = True

    def run(self) -> list[nodes.Node]:
        if self.arguments:
            raise self.error(
                f"{self.name} takes no argument (got {self.arguments[0]!r}); give the "
                "configuration as options, e.g. :capability: 9.0 and :head-size: 128"
            )
        return super().run()

    def analysis_of(self, root: str, profile: str | None = None) -> Analysis:
        self.options.pop("profile", None)  # the selection is what runs: always runtime
        return super().analysis_of(root, profile)

    def render(self, analysis, spec, backends):  # type: ignore[no-untyped-def]
        environment = self.environment()
        if "arch" in self.options:  # a ROCm GPU by its arch name
            environment = dataclasses.replace(environment, arch=self.options["arch"])
        selector = selector_for(self.env, analysis.root, environment)
        config = config_from_options(self.options)
        if "kv-cache-dtype" in self.options:  # as select --kv-cache-dtype: the release's
            try:
                inputs.check_kv_cache_dtype(
                    config.kv_cache_dtype, kv_cache_dtypes(selector.interp)
                )
            except ValueError as exc:
                raise render.RenderError(f":kv-cache-dtype: {exc}") from None
        if "backend" in self.options:  # asked for, as --attention-backend asks
            config.selected_backend = self.options["backend"]
            try:
                check_backend(selector.interp, config.selected_backend)
            except ValueError as exc:
                raise render.RenderError(f":backend: {exc}") from None
        if "model-config" in self.options:
            source = self.state.document.current_source or self.env.doc2path(self.env.docname)
            config_path = model_path(self.options["model-config"], str(source))
            self.env.note_dependency(str(config_path))
            deco, gpu = self.deco, gpu_words(environment)
            return model_nodes(selector, self.options, config_path, spec, deco, gpu)
        decision = selector.explain(selector.decide(config))

        decision.flash_attn_version = flash_attn_version(
            selector.interp, config, decision.selected
        )
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
        found = None
        if "alternatives" in self.options:  # each asks the tree again: on request
            found = self._alternatives(analysis.root, environment, config, decision)
        return decision_nodes(
            config, decision, spec, deco=self.deco, gpu=gpu_words(environment), alternatives=found
        )

    def _alternatives(
        self, root: str, environment: Environment, config: Config, decision: Decision
    ) -> list[Alternative]:
        """What would change the pick, as ``select`` finds it (each changed fact's
        decision, on that environment's evaluator)."""

        def decide(other: Environment) -> JsonObject:
            selector = selector_for(self.env, root, other)
            return selector.explain(selector.decide(config)).to_json()

        return alternatives(decision.to_json(), environment, decide)

    def not_analysed(self, analysis: Analysis) -> list[nodes.Node]:
        return []
