"""Rows a reader can tell apart, in Chromium on every theme the suite builds (issue 35).

Scrolled fully right, a feature table still shows each row's key: Backend, and
in the standard table Version beside it (three FLASH_ATTN and three FLASHINFER
rows differ only there). At 390 px a decision's table has no text outside the
viewport: its reasons stack under the backend. Each check is also run with the
layout switched off in the page, so it is shown to fail where a reader is lost.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from attn_browser_site import THEMES, WIDTHS, open_page

pytestmark = [pytest.mark.browser, pytest.mark.realtree]

HERE = Path(__file__).parent
KEYS = (HERE / "keys.js").read_text(encoding="utf-8")
OUTSIDE = (HERE / "outside.js").read_text(encoding="utf-8")
#: the feature tables of vLLM 0.33.0's page, each wider than the column at both widths
FEATURE_TABLES = 4
VARIANTS = ["attn-standard.attn-keyed: FLASHINFER", "attn-standard.attn-keyed: FLASH_ATTN"]


def _unkey(page: Any) -> None:
    """The page as it reads without the script: only Backend sticks."""
    page.evaluate(
        "document.querySelectorAll('.attn-key-measured')"
        ".forEach(t => t.classList.remove('attn-key-measured'))"
    )


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("theme", list(THEMES))
def test_scrolled_rows_keep_their_key(
    browser: Any, sites: dict[str, Path], theme: str, width: int
) -> None:
    page = open_page(browser, sites[theme], width, "light")
    try:
        page.wait_for_selector("table.attn-keyed.attn-key-measured", state="attached")
        report = page.evaluate(KEYS)
        where = f"{theme} {width}px"
        assert len(report["checked"]) == FEATURE_TABLES, where
        assert all(scrolled for _, scrolled, _ in report["checked"]), where
        assert report["repeated"] == [], where
        assert report["overlapping"] == [], where
        standard = next(k for k in report["frozen"] if k.startswith("attn-standard"))
        assert report["frozen"][standard] == ["Backend", "Version"], where
        _unkey(page)
        unkeyed = page.evaluate(KEYS)
        assert sorted(set(unkeyed["repeated"])) == VARIANTS, where
    finally:
        page.context.close()


def test_version_follows_backends_width(browser: Any, sites: dict[str, Path]) -> None:
    """Version's offset is Backend's width as it came out, after a change of width too."""
    page = open_page(browser, sites["furo"], 1280, "light")
    try:
        page.wait_for_selector("table.attn-keyed.attn-key-measured", state="attached")
        offset = (
            "parseFloat(document.querySelector('table.attn-keyed')"
            ".style.getPropertyValue('--attn-key-left'))"
        )
        before = page.evaluate(offset)
        page.set_viewport_size({"width": 1000, "height": 900})
        page.add_style_tag(content="table.attn-keyed td:first-child code { font-size: 1.2em; }")
        page.wait_for_function(
            """() => { const t = document.querySelector('table.attn-keyed');
                       const w = t.tHead.rows[0].cells[0].getBoundingClientRect().width;
                       return Math.abs(parseFloat(t.style.getPropertyValue('--attn-key-left')) - w)
                              < 0.5; }"""
        )
        assert page.evaluate(offset) > before + 10
        report = page.evaluate(KEYS)
        assert report["repeated"] == [] and report["overlapping"] == []
        assert len(report["checked"]) == FEATURE_TABLES
    finally:
        page.context.close()


@pytest.mark.parametrize("theme", list(THEMES))
def test_decision_reads_on_a_phone(browser: Any, sites: dict[str, Path], theme: str) -> None:
    page = open_page(browser, sites[theme], 390, "light")
    try:
        report = page.evaluate(OUTSIDE)
        assert report["tables"] >= 1 and report["lines"] > 0, theme
        assert report["outside"] == [], theme
        # the reasons stack under the backend: the rejected row's Why is below its name
        stacked = page.evaluate(
            """(() => { const row = [...document.querySelectorAll('table.attn-select tbody tr')]
                          .find(r => r.cells[3].textContent.trim());
                        const name = row.cells[1].getBoundingClientRect();
                        const why = row.cells[3].getBoundingClientRect();
                        return why.top >= name.bottom - 1 && why.left >= name.left - 1; })()"""
        )
        assert stacked, theme
        if theme == "furo":  # without the stacking, the reasons are off screen
            page.evaluate(
                "document.querySelectorAll('.attn-scroll-stack')"
                ".forEach(b => b.classList.remove('attn-scroll-stack'))"
            )
            assert page.evaluate(OUTSIDE)["outside"] != []
    finally:
        page.context.close()


def test_decision_is_a_table_when_wide(browser: Any, sites: dict[str, Path]) -> None:
    """At 1280 px the decision keeps its columns: Why beside Result, on the row's line."""
    page = open_page(browser, sites["furo"], 1280, "light")
    try:
        beside = page.evaluate(
            """(() => { const row = document.querySelector('table.attn-select tbody tr');
                        const result = row.cells[2].getBoundingClientRect();
                        const why = row.cells[3].getBoundingClientRect();
                        return Math.abs(why.top - result.top) < 1 && why.left >= result.right - 1;
                      })()"""
        )
        assert beside
        assert page.evaluate(OUTSIDE)["outside"] == []
    finally:
        page.context.close()


def test_prefill_alternatives_one_to_a_line(browser: Any, sites: dict[str, Path]) -> None:
    """An MLA prefill note's head-dimension alternatives start a line each; the text
    is the note's as the renderer wrote it."""
    page = open_page(browser, sites["furo"], 1280, "light")
    try:
        cells = page.evaluate(
            """[...document.querySelectorAll('table.attn-prefill tbody tr')].map(tr => {
                 const td = tr.cells[tr.cells.length - 1];
                 const spans = [...td.querySelectorAll('span.attn-alternative')];
                 const tops = spans.map(s => s.getBoundingClientRect().top);
                 const bottoms = spans.map(s => s.getBoundingClientRect().bottom);
                 return {text: td.textContent.trim(), spans: spans.length,
                         apart: tops.every((t, i) => i === 0 || t >= bottoms[i - 1] - 1)};
               })"""
        )
        alternatives = [c for c in cells if c["spans"]]
        assert alternatives and all(c["spans"] >= 2 and c["apart"] for c in alternatives)
        for cell in cells:
            assert cell["spans"] == cell["text"].count(") or (") + (1 if cell["spans"] else 0)
            assert cell["text"].endswith(" only")
    finally:
        page.context.close()
