"""``setup(app)``: registers the config value, the directives and the event handlers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sphinxext_attn.sphinx import config, events
from sphinxext_attn.sphinx.diff import DiffDirective
from sphinxext_attn.sphinx.directives import DIRECTIVES
from sphinxext_attn.sphinx.present import setup_present
from sphinxext_attn.sphinx.provenance import setup_nodes
from sphinxext_attn.sphinx.select_directive import SelectDirective
from sphinxext_attn.sphinx.selector import setup_selector
from sphinxext_attn.sphinx.xref import setup_xref
from sphinxext_attn.version import __version__

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.util.typing import ExtensionMetadata

#: bump when what is kept on the environment changes shape
#: 6: AnalysisKey.plugins; 5: BackendFeatures.accepts; 4: analyses kept by AnalysisKey;
#: 3: Analysis.page_columns, capability_columns, profile; PriorityList conditions
ENV_VERSION = 6


def setup(app: Sphinx) -> ExtensionMetadata:
    config.register(app)
    for name, directive in DIRECTIVES.items():
        app.add_directive(name, directive)
    app.add_directive("attention-backends-diff", DiffDirective)
    app.add_directive("attention-backends-select", SelectDirective)
    setup_nodes(app)
    setup_present(app)
    setup_xref(app)
    setup_selector(app)
    app.connect("builder-inited", events.builder_inited)
    app.connect("env-get-outdated", events.get_outdated)
    app.connect("env-before-read-docs", events.before_read_docs)
    app.connect("env-purge-doc", events.purge_doc)
    app.connect("env-merge-info", events.merge_info)
    app.connect("env-updated", events.env_updated)
    app.connect("build-finished", events.build_finished)
    app.connect("doctree-resolved", events.breakable_literals)
    app.add_latex_package(events.LATEX_PACKAGE)  # ✅ ❌ † ‡ ≥ for pdflatex and xelatex
    return {
        "version": __version__,
        "env_version": ENV_VERSION,
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
