"""A first run of the runtime profile splits the backends over two processes
(``analysis/units.py``): whatever the split, the analysis is the one a single
process makes, and the rest of the page is read while the child works when the
backends it depends on (those the variant rule splits) are the parent's."""

from __future__ import annotations

import os

import pytest
from runtime_trees import runtime_tree

from sphinxext_attn.analysis import units
from sphinxext_attn.analysis.units import runtime_analysis
from sphinxext_attn.model.key import AnalysisKey
from sphinxext_attn.model.records import Analysis
from sphinxext_attn.render.jsonout import render_json as to_json

#: the tree's root, and its analysis in one process: JSON, warnings
Alone = tuple[str, str, list[str]]
needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="this platform has no os.fork")


def _said(analysis: Analysis) -> list[str]:
    return [f"{d.location}: {d.message}" for d in analysis.diagnostics]


@pytest.fixture(scope="module")
def alone(tmp_path_factory: pytest.TempPathFactory) -> Alone:
    """The default tree, and its analysis (JSON, warnings) in one process."""
    root = str(runtime_tree(tmp_path_factory.mktemp("tree")))
    analysis, _ = runtime_analysis(AnalysisKey(str(root)))
    return root, to_json(analysis), _said(analysis)


@needs_fork
@pytest.mark.parametrize(
    ("share", "rest_early"),
    # the default tree registers FLASH_ATTN (the first: asked before the fork),
    # TRITON_ATTN, FLASHINFER, TRITON_MLA and CPU_ATTN; FLASHINFER is the child's at 0%
    [(0, False), (50, True)],
)
def test_the_split_changes_nothing(
    alone: Alone, monkeypatch: pytest.MonkeyPatch, share: int, rest_early: bool
) -> None:
    root, json, said = alone
    monkeypatch.setattr(units, "MIN_FORKED", 0)
    monkeypatch.setattr(units, "PARENT_SHARE", share)
    together, runner = runtime_analysis(AnalysisKey(str(root)), parallel=True)
    assert (to_json(together), _said(together)) == (json, said)
    computed = runner.computed
    rest = next(i for i, key in enumerate(computed) if key.startswith("('rest'"))
    last_backend = max(i for i, key in enumerate(computed) if key.startswith("('backend'"))
    # the parent keeps the child's backends (the last two at 50%) once it has them
    assert (rest < last_backend) == rest_early
