"""The selector says what ``select`` says (issue 35, one voice): for configurations
across the grid, every backend of the list in the same order with the same label
(selected, rejected, valid with lower priority) and, for a rejected one, vLLM's
reasons in vLLM's order, as the command line's decision has them. The page's
table holds a reason once per backend: where vLLM's list repeats one (its check
appends the same text twice), the page shows it once; those backends are an
exact list below."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import vllm_trees
from attn_browser_site import build_site

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.selection import Config
from sphinxext_attn.model.selector_shape import GRID, query_value
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.source.tree import SourceTree

pytestmark = [pytest.mark.browser, pytest.mark.realtree]

PAGE = "The selector\n============\n\n.. attention-backends-selector::\n"
#: the state the page gives each step (its class) -> ``select``'s label
LABELS = {
    "attn-chosen": "selected",
    "attn-rejected": "rejected",
    "attn-lower": "valid, lower priority",
}
STEPS = """(() => Array.from(document.querySelectorAll('.attn-selector-list > li')).map(li => ({
  name: li.querySelector('code').textContent, state: li.className,
  text: li.textContent.slice(li.querySelector('code').textContent.length)})))()"""


def configurations(count: int, seed: int) -> list[Config]:
    """``count`` configurations of the selector's grid, the same for the same seed."""
    pick = random.Random(seed)
    return [
        Config(**{dim: pick.choice(values) for dim, values in GRID.items()}) for _ in range(count)
    ]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_site("alabaster", vllm_trees.tree("0.33.0"), tmp_path_factory.mktemp("one"), PAGE)


def test_labels_and_reasons_are_the_command_lines(browser: Any, site: Path) -> None:
    selector = Selector(Interpreter(SourceTree(str(vllm_trees.tree("0.33.0"))), Machine()))
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    compared = 0
    repeated: set[str] = set()
    try:
        for config in configurations(60, 35):
            truth = selector.explain(selector.decide(config))
            if truth.candidates or truth.unknown or truth.error:
                continue  # conditional: tests/browser/test_selector_conditional.py
            query = "&".join(f"{dim}={query_value(getattr(config, dim))}" for dim in GRID)
            page.goto((site / "index.html").as_uri() + "?" + query)
            page.wait_for_load_state("load")
            steps = page.evaluate(STEPS)
            assert [s["name"] for s in steps] == truth.priorities, config
            for step in steps:
                want = truth.label(step["name"])
                assert LABELS[step["state"].split()[0]] == want, (config, step)
                if want == "rejected":
                    reasons = truth.rejected[step["name"]]
                    once = list(dict.fromkeys(reasons))
                    if once != reasons:
                        repeated.add(step["name"])
                    assert step["text"] == ": rejected: " + "; ".join(once), (config, step)
                else:
                    assert step["text"] == ": " + want, (config, step)
            compared += 1
    finally:
        context.close()
    assert compared >= 50
    assert repeated == {"FLASHINFER_MLA_SPARSE_SM120"}  # vLLM lists "dtype not supported" twice


def test_environment_controls_speak_a_readers_words(browser: Any, site: Path) -> None:
    """Each control in words with its exact name beside them; a starting value is
    the reference machine's unless the docs set it (issue 35)."""
    context = browser.new_context(viewport={"width": 390, "height": 900})
    page = context.new_page()
    try:
        page.goto((site / "index.html").as_uri() + "?capability=10.0&head_size=64&has_sink=true")
        page.wait_for_load_state("load")
        labels = page.evaluate(
            """Array.from(document.querySelectorAll('.attn-selector-fact label'))
                 .map(l => l.textContent)"""
        )
        chosen = page.evaluate(
            """Array.from(document.querySelectorAll('.attn-selector-fact select'))
                 .map(s => s.options[s.selectedIndex].textContent)"""
        )
        overflow = page.evaluate(
            """Array.from(document.querySelectorAll('.attn-selector-fact code'))
                 .filter(c => c.scrollWidth > c.clientWidth + 1 ||
                              c.getBoundingClientRect().right > window.innerWidth).length"""
        )
    finally:
        context.close()
    assert "flashinfer-cubin installed installed.flashinfer_cubin" in labels, labels
    assert "network reachable network" in labels, labels
    assert any(label.endswith("VLLM_HAS_FLASHINFER_CUBIN") for label in labels), labels
    assert chosen and all(
        "(the reference machine's)" in text or "not known" in text for text in chosen
    ), chosen
    assert overflow == 0
