"""The selector gives a pick that rests on a check the code cannot settle as conditional.

vLLM 0.33.0 on SM 9.0, sparse MLA with an fp8 KV cache: FLASHINFER_MLA_SPARSE_SM90
is the one backend left, and its check asks the installed FlashInfer's signature.
``select`` says "conditional" with the candidate and its condition; the widget says
the same, and never shows a definite backend for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from attn_browser_site import open_page

pytestmark = [pytest.mark.browser, pytest.mark.realtree]

QUERY = "?capability=9.0&dtype=bf16&head_size=576&use_mla=true&use_sparse=true&kv_cache_dtype={kv}"


def _shown(page: Any) -> dict[str, Any]:
    shown: dict[str, Any] = page.evaluate(
        """(() => {
          const box = document.querySelector('.attn-selector');
          const text = sel => Array.from(box.querySelectorAll(sel)).map(e => e.textContent);
          return {selected: text('.attn-selected'), conditional: text('.attn-conditional'),
                  candidates: text('.attn-candidate'), notices: text('.attn-selector-notice')};
        })()"""
    )
    return shown


def test_a_pick_resting_on_an_unsettled_check_is_conditional(
    browser: Any, sites: dict[str, Path]
) -> None:
    page = open_page(browser, sites["furo"], 1280, "light", QUERY.format(kv="fp8_e4m3"))
    try:
        shown = _shown(page)
    finally:
        page.context.close()
    assert shown["notices"] == [] and shown["selected"] == [], shown
    assert shown["conditional"] == ["conditional"]
    (candidate,) = shown["candidates"]
    assert candidate.startswith(
        "FLASHINFER_MLA_SPARSE_SM90 if FLASHINFER_MLA_SPARSE_SM90 qualifies"
    )
    assert "inspect.signature" in candidate


def test_a_pick_ahead_of_the_unsettled_check_stays_definite(
    browser: Any, sites: dict[str, Path]
) -> None:
    page = open_page(browser, sites["furo"], 1280, "light", QUERY.format(kv="auto"))
    try:
        shown = _shown(page)
    finally:
        page.context.close()
    assert shown["selected"] == ["FLASH_ATTN_MLA_SPARSE"] and shown["conditional"] == [], shown
