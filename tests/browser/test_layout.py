"""The tables as a reader sees them: 5 themes x light/dark x 1280/390 px, in Chromium.

Each page is measured by ``probe.js`` (run in the page): the document's
width, each table's scroll box against the column, the text lines of every
feature-table row and caption, the contrast of every text and mark against
its background, the sticky header and Backend column after scrolling, and
duplicate ids. The targets of issue 25 are the assertions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from attn_browser_site import SCHEMES, THEMES, WIDTHS, open_page, screenshot_dir

pytestmark = [pytest.mark.browser, pytest.mark.realtree]

PROBE = (Path(__file__).parent / "probe.js").read_text(encoding="utf-8")
MAX_ROW_LINES = 4
MIN_CONTRAST = 4.5


def measure(page: Any) -> dict[str, Any]:
    report: dict[str, Any] = page.evaluate(PROBE)
    return report


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("theme", list(THEMES))
def test_tables_fit_and_read(
    browser: Any, sites: dict[str, Path], theme: str, scheme: str, width: int
) -> None:
    page = open_page(browser, sites[theme], width, scheme)
    try:
        report = measure(page)
        dark = page.evaluate(
            "getComputedStyle(document.body).backgroundColor.match(/\\d+/g).slice(0, 3)"
            ".reduce((a, b) => a + Number(b), 0) < 300"
        )
        _check(report, f"{theme} {scheme} {width}px", width)
        shots = screenshot_dir()
        if shots is not None and width == 1280 and (scheme == "light" or THEMES[theme]):
            _screenshot(page, shots / f"{theme}-{scheme}.png")
    finally:
        page.context.close()
    # a theme with a dark mode is dark when the reader's system is
    assert dark == (scheme == "dark" and THEMES[theme])


def _check(report: dict[str, Any], where: str, width: int) -> None:
    """The targets of issue 25 on one page."""
    assert report["tables"] >= 20, where
    assert report["scrollWidth"] <= report["viewport"], (where, report["overflowing"])
    assert report["unscrolled"] == [], where
    assert report["wideContainers"] == [], where
    assert report["ids"] == [], where
    assert report["contrasts"] == [], where
    assert report["minContrast"] >= MIN_CONTRAST, where
    assert report["rows"], where
    if width == 1280:
        tall = [r for r in report["rows"] if r[1] > MAX_ROW_LINES]
        assert tall == [], where
        wrapped = [c for c in report["captions"] if c[1] > 1]
        assert wrapped == [], where
    # the feature tables are wider than every column at both widths: each one scrolls,
    # and its header row and Backend column stay in view
    assert report["stickyChecked"] >= 4, where
    assert report["sticky"] == [], where


def _screenshot(page: Any, out: Path) -> None:
    """The top of the standard feature table under its heading, for the docs' gallery
    (room left above it for a theme's fixed header bar)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    top = page.evaluate(
        """(() => {
          const box = document.querySelector('div.attn-scroll-sticky');
          const title = box.previousElementSibling || box;
          return title.getBoundingClientRect().top + window.scrollY - 130;
        })()"""
    )
    page.evaluate(f"window.scrollTo(0, {max(0, int(top))})")
    page.screenshot(path=str(out), clip={"x": 0, "y": 0, "width": 1280, "height": 640})


def test_selector_is_usable_on_a_phone(browser: Any, sites: dict[str, Path]) -> None:
    """At 390 px every control of the selector is on screen and can be changed."""
    page = open_page(browser, sites["furo"], 390, "light")
    try:
        outside = page.evaluate(
            """Array.from(document.querySelectorAll('.attn-selector select, .attn-selector input'))
              .filter(e => { const r = e.getBoundingClientRect();
                             return r.left < 0 || r.right > window.innerWidth; })
              .map(e => e.name)"""
        )
        assert outside == []
        page.select_option(".attn-selector select[name=dtype]", "fp16")
        shown = page.locator(".attn-selector .attn-selected").first.inner_text()
        assert shown and shown != "none"
    finally:
        page.context.close()
