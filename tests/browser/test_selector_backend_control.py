"""The selector's Backend control: pick a backend, read what vLLM does with the
request, in ``select --backend``'s words (one voice): the request line, vLLM's
reasons in its order (or the platform's words where it ignores the request), and
the backend used or vLLM's message. On a small tree (CUDA checks the requested
class; XPU's rules may ignore the request) every name at a few configurations,
and on vLLM 0.33.0 a sample of the release's recorded requests. The ``backend``
URL key round-trips; a name the release has not gets the page's notice."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import vllm_trees
from attn_browser_site import build_site
from request_trees import request_tree

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.environment import Environment
from sphinxext_attn.model.selection import Config, Decision, request_summary
from sphinxext_attn.model.selector_shape import GRID, query_value
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.selection.requested import backend_names
from sphinxext_attn.source.tree import SourceTree

pytestmark = pytest.mark.browser

PAGE = "The selector\n============\n\n.. attention-backends-selector::\n   :backend-control:\n"
PLATFORMS = PAGE + "   :platforms: cuda, xpu\n"
#: what the decision region says: its paragraphs and list items, in order (but the
#: environment the page assumes, which its controls show)
ANSWER = """(() => Array.from(document.querySelectorAll(
  '.attn-selector-decision > p:not(.attn-selector-assuming), .attn-selector-decision li'))
  .map(n => n.textContent))()"""


def said(decision: Decision) -> list[str]:
    """What the page shows for ``select``'s decision: the request line (capitalised,
    as the select directive writes it), each reason, then the backend used."""
    lines = request_summary(decision) if decision.requested is not None else []
    out = [lines[0][0].upper() + lines[0][1:]] if lines else []
    out += [line.strip().removeprefix("- ") for line in lines[1:]]
    if decision.refused:
        out.append(f"Selected: none (vLLM raises: {decision.refused})")
    elif decision.candidates:
        out.append("Selected: conditional (the code cannot settle it statically)")
        out += [f"{c['backend']} if {c['if']}" for c in decision.candidates]
    elif decision.selected:
        out.append(f"Selected: {decision.selected}")
    return out


def _query(config: Config, **extra: str) -> str:
    values = {dim: query_value(getattr(config, dim)) for dim in GRID}
    values.update(extra)
    return "?" + "&".join(f"{k}={v}" for k, v in values.items())


def _truth(selector: Selector, config: Config) -> Decision:
    return Decision.from_json(selector.explain(selector.decide(config)).to_json())


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("small")
    tree = request_tree(root / "tree")
    return tree, build_site("alabaster", tree, root / "site", PLATFORMS)


def test_picking_a_backend_answers_as_select_does(browser: Any, small: tuple[Path, Path]) -> None:
    tree, site = small
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    seen = set()
    try:
        for platform in ("cuda", "xpu"):
            selector = Selector(
                Interpreter(SourceTree(tree), Machine(Environment(platform=platform)))
            )
            for config in (Config(head_size=128), Config(head_size=64, dtype="fp32"),
                           Config(head_size=576, use_mla=True)):  # fmt: skip
                page.goto((site / "index.html").as_uri() + _query(config, platform=platform))
                page.wait_for_load_state("load")
                for name in backend_names(selector.interp):
                    page.select_option('select[name="backend"]', name)  # the reader picks it
                    config.selected_backend = name
                    truth = _truth(selector, config)
                    assert page.evaluate(ANSWER) == said(truth), (platform, config)
                    seen.add(
                        "refused" if truth.refused else "ignored" if truth.ignored else "used"
                    )
                    assert f"backend={name}" in page.url
                page.select_option('select[name="backend"]', "")
                assert "backend=" not in page.url  # automatic: no request in the address
    finally:
        context.close()
    assert seen == {"refused", "ignored", "used"}


def test_the_backend_key_round_trips_and_an_unknown_name_is_said(
    browser: Any, small: tuple[Path, Path]
) -> None:
    tree, site = small
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        page.goto((site / "index.html").as_uri() + "?backend=TRITON_ATTN&head_size=128")
        page.wait_for_load_state("load")
        assert page.input_value('select[name="backend"]') == "TRITON_ATTN"
        assert page.evaluate(ANSWER)[0] == "Requested: TRITON_ATTN: vLLM uses it"
        page.select_option('select[name="dtype"]', "fp32")  # another change keeps the key
        assert "backend=TRITON_ATTN" in page.url
        page.goto((site / "index.html").as_uri() + "?backend=automatic")
        page.wait_for_load_state("load")
        assert page.input_value('select[name="backend"]') == ""
        assert not page.evaluate(ANSWER)[0].startswith("Requested")
        page.goto((site / "index.html").as_uri() + "?backend=NO_SUCH")
        page.wait_for_load_state("load")
        notice = page.evaluate(ANSWER)
        assert notice[0].startswith("'NO_SUCH' is not a backend of this release; choose from ")
        assert page.get_attribute('select[name="backend"]', "aria-invalid") == "true"
        page.select_option('select[name="dtype"]', "fp16")
        assert "backend=NO_SUCH" in page.url  # kept as the reader wrote it
    finally:
        context.close()


@pytest.mark.realtree
def test_vllms_recorded_requests_on_the_page(browser: Any, tmp_path: Path) -> None:
    """A sample of vLLM 0.33.0's recorded CUDA requests, each as select says it."""
    tree = vllm_trees.tree("0.33.0")
    site = build_site("alabaster", tree, tmp_path, PAGE)
    path = vllm_trees.shared_dir() / "vllm" / "select" / "requested-0.33.0.json"
    cases = [c for c in json.loads(path.read_text(encoding="utf-8")) if c["selected_backend"]]
    selector = Selector(Interpreter(SourceTree(str(tree)), Machine()))
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        for case in random.Random(34).sample(cases, 40):
            config = Config.from_case(case)
            page.goto(
                (site / "index.html").as_uri() + _query(config, backend=case["selected_backend"])
            )
            page.wait_for_load_state("load")
            assert page.evaluate(ANSWER) == said(_truth(selector, config)), case
    finally:
        context.close()
