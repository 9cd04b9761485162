"""The selector never replaces a value from the page's address silently (issue 24, item 5).

Head size and capability are free input; a value the page's table cannot
answer stays in the form with a visible notice saying why; whatever the
address holds is shown as text, never as markup.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from attn_browser_site import open_page

pytestmark = [pytest.mark.browser, pytest.mark.realtree]


def _state(page: Any) -> dict[str, Any]:
    state: dict[str, Any] = page.evaluate(
        """(() => {
          const box = document.querySelector('.attn-selector');
          const get = n => box.querySelector('[name="' + n + '"]');
          const text = sel => Array.from(box.querySelectorAll(sel)).map(e => e.textContent);
          const data = JSON.parse(box.querySelector('script.attn-selector-data').textContent);
          return {capability: get('capability').value, head_size: get('head_size').value,
                  dtype: get('dtype').value, notices: text('.attn-selector-notice'),
                  hints: text('.attn-selector-hint'), selected: text('.attn-selected'),
                  invalid: Array.from(box.querySelectorAll('[aria-invalid="true"]'))
                             .map(e => e.name),
                  images: box.querySelectorAll('img, script:not(.attn-selector-data)').length,
                  rules: 'head_rules' in data, caps: Object.keys(data.caps),
                  complete: 'head_rules' in data && Object.keys(data.caps['9.0'].backends)
                    .every(n => n in data.head_rules)};
        })()"""
    )
    return state


def test_values_the_page_cannot_answer_stay_and_are_flagged(
    browser: Any, sites: dict[str, Path]
) -> None:
    page = open_page(
        browser, sites["furo"], 390, "light", "?capability=7.5&head_size=88&dtype=fp32"
    )
    try:
        state = _state(page)
    finally:
        page.context.close()
    assert "7.5" not in state["caps"]
    assert (state["capability"], state["head_size"], state["dtype"]) == ("7.5", "88", "fp32")
    assert any("7.5" in n for n in state["notices"]), state
    assert "capability" in state["invalid"]
    assert state["selected"] == []  # no decision for a configuration the page cannot answer


def test_a_head_size_off_the_grid(browser: Any, sites: dict[str, Path]) -> None:
    """On a capability the page holds, a head size off the grid is answered from the
    backends' exact rules where the data has one for each of them, else flagged (vLLM
    0.33.0: FLASH_ATTN's variants state no exact set); never replaced."""
    page = open_page(browser, sites["furo"], 1280, "dark", "?capability=9.0&head_size=88")
    try:
        state = _state(page)
    finally:
        page.context.close()
    assert state["head_size"] == "88"
    if state["complete"]:
        assert state["notices"] == [] and state["selected"], state
        assert any("88" in h for h in state["hints"]), state
    else:
        assert any("Head size 88" in n for n in state["notices"]), state
        assert state["invalid"] == ["head_size"]


def test_address_values_are_text_never_markup(browser: Any, sites: dict[str, Path]) -> None:
    evil = '<img src=x onerror="document.title=1">'
    query = "?capability=" + evil + "&dtype=" + evil + "&head_size=%3Cb%3E1"
    page = open_page(browser, sites["furo"], 1280, "light", query)
    try:
        state = _state(page)
        title = page.title()
    finally:
        page.context.close()
    assert state["images"] == 0 and title != "1"
    assert state["capability"] == evil and state["head_size"] == "<b>1"
    assert state["dtype"] == evil  # kept, as an extra entry of its list
    shown = json.dumps(state["notices"])
    assert "<img" in shown and "<b>1" in shown


def test_exact_rules_answer_an_off_grid_head_size(
    browser: Any, sites: dict[str, Path], tmp_path: Path
) -> None:
    """With each backend's rule in the data, a size off the grid is decided as the grid
    size every backend treats alike: here every backend but one accepts any size, and
    that one takes multiples of 32 only, so 88 is decided as 80 is (both refused by it),
    and 160 as 64 (both taken)."""
    site = sites["furo"]
    html = (site / "index.html").read_text(encoding="utf-8")
    found = re.search(
        r'(<script type="application/json" class="attn-selector-data">)(.*?)(</script>)',
        html,
        re.S,
    )
    assert found
    data = json.loads(found.group(2).replace("<\\/", "</"))
    names = sorted({n for cap in data["caps"].values() for n in cap["backends"]})
    odd = "FLASH_ATTN" if "FLASH_ATTN" in names else names[0]
    data["head_rules"] = {n: "any" for n in names}
    data["head_rules"][odd] = [{"min": None, "max": None, "multiple_of": 32}]
    text = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    probe = site / "rules.html"
    probe.write_text(html[: found.start(2)] + text + html[found.end(2) :], encoding="utf-8")
    shown = {}
    for size in ("88", "80", "160", "64"):
        page = browser.new_page()
        try:
            page.goto(probe.as_uri() + f"?capability=9.0&head_size={size}")
            shown[size] = _state(page)
        finally:
            page.close()
    assert shown["88"]["head_size"] == "88" and shown["88"]["notices"] == []
    assert any("decided as 80" in h for h in shown["88"]["hints"]), shown["88"]
    assert shown["88"]["selected"] == shown["80"]["selected"]
    assert any("decided as 64" in h for h in shown["160"]["hints"]), shown["160"]
    assert shown["160"]["selected"] == shown["64"]["selected"]


@pytest.mark.parametrize(
    ("query", "dim", "words"),
    [
        ("?capability=9", "capability", "not a compute capability; give MAJOR.MINOR"),
        ("?capability=sm90", "capability", "not a compute capability; give MAJOR.MINOR"),
        ("?use_mla=maybe", "use_mla", "is neither true nor false"),
        ("?has_sink=1", "has_sink", "is neither true nor false"),
        ("?platform=tpu", "platform", "this page holds decisions for cuda only"),
    ],
)
def test_address_values_are_checked_as_the_command_line_checks_them(
    browser: Any, sites: dict[str, Path], query: str, dim: str, words: str
) -> None:
    """``select --capability 9`` is exit 2, and so is no answer here: the value stays,
    flagged, with no decision (issue 35: never coerced, never dropped)."""
    page = open_page(browser, sites["furo"], 1280, "light", query)
    try:
        state = _state(page)
    finally:
        page.context.close()
    value = query.split("=", 1)[1]
    assert any(words in n and value in n for n in state["notices"]), state
    assert state["selected"] == []
    if dim == "capability":
        assert state["capability"] == value and "capability" in state["invalid"]
