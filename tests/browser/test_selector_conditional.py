"""The selector's pick where it rests on a dependency's feature probe.

vLLM 0.33.0 on SM 9.0, sparse MLA with an fp8 KV cache: FLASHINFER_MLA_SPARSE_SM90
is the one backend left, and its check asks the installed FlashInfer's signature.
The reference machine's pinned FlashInfer has what the probe looks for, so the pick
is definite (it was conditional while the probe was not evaluated); a conditional
pick is pinned by tests/selection/test_select_releases.py and test_platforms.py.
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


def test_a_pick_resting_on_the_feature_probe_is_definite(
    browser: Any, sites: dict[str, Path]
) -> None:
    page = open_page(browser, sites["furo"], 1280, "light", QUERY.format(kv="fp8_e4m3"))
    try:
        shown = _shown(page)
    finally:
        page.context.close()
    assert shown["notices"] == [] and shown["conditional"] == [], shown
    assert shown["selected"] == ["FLASHINFER_MLA_SPARSE_SM90"], shown


def test_a_pick_ahead_of_the_feature_probe_stays_definite(
    browser: Any, sites: dict[str, Path]
) -> None:
    page = open_page(browser, sites["furo"], 1280, "light", QUERY.format(kv="auto"))
    try:
        shown = _shown(page)
    finally:
        page.context.close()
    assert shown["selected"] == ["FLASH_ATTN_MLA_SPARSE"] and shown["conditional"] == [], shown
