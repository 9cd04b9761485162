"""The selector's answer for a backend asked for (``select --backend NAME``), on a
small tree written the way vLLM writes it: CUDA checks the requested class, XPU's
rules may ignore the request or refuse without a list. Every point of a small grid
and every name the registry has is read back from the table and compared with
``select``'s own decision (its text, the backend used, vLLM's message)."""

from __future__ import annotations

import itertools
import json
import re
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from attn_sphinx_util import build, sphinx_project, warnings
from request_trees import request_tree
from sphinx.testing.util import SphinxTestApp

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.environment import environment_from
from sphinxext_attn.model.selection import Config, Decision, request_summary
from sphinxext_attn.model.selector_shape import SelectorData
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.render.selector_html import request_names, selector_html
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.selection.requested import backend_names
from sphinxext_attn.selector.grid import GRID, Grid, config_at, dims_of, query_value
from sphinxext_attn.selector.requests import (
    AGAIN,
    SLOT,
    add_requests,
    predict_request,
    request_decision,
    tokens,
)
from sphinxext_attn.selector.variants import keep_used
from sphinxext_attn.source.tree import SourceTree

#: the grid's settings at their defaults, but for a few each with two values
SMALL: Grid = {
    **{dim: (getattr(Config(), dim),) for dim in GRID},
    "capability": ("8.0", "9.0"),
    "dtype": ("fp16", "fp32"),
    "head_size": (100, 128),
    "block_size": (None, 16),
    "use_mla": (False, True),
}


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return request_tree(tmp_path_factory.mktemp("requests") / "tree")


def _selector(root: Path, platform: str) -> Selector:
    env = environment_from(None, None, None, platform, "")
    return Selector(Interpreter(SourceTree(root), Machine(env)))


def _table(selector: Selector, grid: Grid) -> SelectorData:
    """A table with no priority lists: the requests' answers alone."""
    empty: Any = {"keys": [], "table": []}
    table: SelectorData = {
        "dims": [(d, [query_value(v) for v in values]) for d, values in grid.items()],
        "defaults": [],
        "reasons": ["a reason the table had"],
        "lists": [],
        "caps": {str(c): {"priorities": empty, "backends": {}} for c in grid["capability"]},
    }
    with selector.interp.guarded():
        add_requests(table, selector, grid)
    return json.loads(json.dumps(table))  # as the page ships it


def _said(decision: Decision | None) -> Any:
    assert decision is not None
    picks = [(c["backend"], c["if"]) for c in decision.candidates]
    return request_summary(decision), decision.selected, decision.refused, picks


def _every_point(grid: Grid) -> list[Config]:
    dims = dims_of(grid)
    out = []
    for cap in grid["capability"]:
        for point in itertools.product(*(range(len(grid[d])) for d in dims)):
            out.append(config_at(grid, str(cap), point))
    return out


@pytest.mark.parametrize("platform", ["cuda", "xpu"])
def test_every_request_at_every_point_is_selects(tree: Path, platform: str) -> None:
    grid = SMALL if platform == "cuda" else {**SMALL, "capability": ("9.0",)}
    table = _table(_selector(tree, platform), grid)
    truth = _selector(tree, platform)
    names = backend_names(truth.interp)
    assert list(table["caps"]["9.0"]["requests"]) == names  # every name, in the enum's order
    kinds = set()
    for config, name in itertools.product(_every_point(grid), names):
        config.selected_backend = name
        said = Decision.from_json(truth.explain(truth.decide(config)).to_json())
        assert _said(predict_request(table, config, name)) == _said(said), (config, name)
        kinds.add("refused" if said.refused else "ignored" if said.ignored else "used")
    assert kinds == ({"refused", "used"} if platform == "cuda" else {"refused", "ignored", "used"})
    assert table["reasons"][0] == "a reason the table had"  # the table's own keep their numbers


def test_each_different_answer_is_shipped_once(tree: Path) -> None:
    table = _table(_selector(tree, "cuda"), SMALL)
    indices = [i for cap in table["caps"].values() for i in cap["requests"].values()]
    assert sorted(set(indices)) == list(range(len(table["requests"])))
    shipped = [json.dumps(e, sort_keys=True) for e in table["requests"]]
    assert len(set(shipped)) == len(shipped)


def test_a_refusal_keeps_vllms_list_repeats_and_all() -> None:
    message = "ValueError: Selected backend X is not valid. Reason: ['a', 'b', 'a']"
    decision = Decision(None, ["X"], {"X": ["a", "b", "a"]}, requested="X", refused=message)
    texts = tokens(decision, "X")
    assert texts[0].endswith(SLOT) and texts[1:] == ["a", "b", f"a{AGAIN}2"]
    again = request_decision(texts, "X")
    assert (again.refused, again.rejected["X"]) == (message, ["a", "b", "a"])


def test_a_refusal_without_a_list_keeps_its_message() -> None:
    decision = Decision(None, ["X"], requested="X", refused="ValueError: MLA is not supported")
    again = request_decision(tokens(decision, "X"), "X")
    assert (again.refused, again.rejected) == ("ValueError: MLA is not supported", {})


def test_the_backend_control_offers_automatic_and_every_name(tree: Path) -> None:
    table = _table(_selector(tree, "cuda"), SMALL)
    names = request_names(table)
    assert names == backend_names(_selector(tree, "cuda").interp)
    html = selector_html("s", table, {}, {})
    assert '<select id="s-backend" name="backend"><option value="" selected>automatic' in html
    assert all(f'<option value="{n}">{n}</option>' in html for n in names)
    without = json.loads(json.dumps(table))
    for cap in without["caps"].values():
        del cap["requests"]
    del without["requests"]
    assert request_names(without) == []
    assert 'name="backend"' not in selector_html("s", without, {}, {})


def test_a_setting_dropped_from_the_table_is_dropped_from_the_answers(tree: Path) -> None:
    grid = {**SMALL, "capability": ("9.0",), "use_kv_connector": (False, True)}
    table = _table(_selector(tree, "cuda"), grid)
    kept = keep_used(json.loads(json.dumps(table)))
    assert [d for d, _ in kept["dims"]] == list(SMALL)  # nothing reads the KV connector
    small = {**SMALL, "capability": ("9.0",)}
    for config, name in itertools.product(_every_point(small), request_names(table)):
        assert _said(predict_request(kept, config, name)) == _said(
            predict_request(table, config, name)
        )


def _page(tree: Path, dest: Path, options: str) -> str:
    src = sphinx_project(dest, {"index": f"S\n=\n\n.. attention-backends-selector::\n{options}"})
    app = build(
        SphinxTestApp,
        src,
        tree=tree,
        profile=None,
        builddir=dest / "_build",
        status=StringIO(),
        warning=StringIO(),
    )
    assert "WARNING" not in warnings(app), warnings(app)
    return (Path(app.outdir) / "index.html").read_text(encoding="utf-8")


def test_the_page_offers_the_control_where_asked(tree: Path, tmp_path: Path) -> None:
    """``:backend-control:`` adds the control and the answers; a page without it is
    as it was (no control, no answers in its data)."""
    asked = _page(tree, tmp_path / "asked", "   :backend-control:\n")
    plain = _page(tree, tmp_path / "plain", "")
    data = json.loads(re.search(r'class="attn-selector-data">(.*?)</script>', asked, re.S)[1])
    names = backend_names(_selector(tree, "cuda").interp)
    assert all(list(cap["requests"]) == names for cap in data["caps"].values())
    assert 'name="backend"' in asked
    assert 'name="backend"' not in plain and '"requests"' not in plain
