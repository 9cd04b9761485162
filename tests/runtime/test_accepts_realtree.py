"""vLLM's full check on real releases: FlashMLA's dense kernel is Hopper-only
(its ``supports_combination``), so its Compute Cap. is 9.x though its own method
says 9.x and 10.x; and 0.30's composite TRITON_FLASH_ATTN refuses head size 256
(FlashAttention 3 on Hopper, its causal route asking for 4) with vLLM's default
engine config."""

from __future__ import annotations

import json

import pytest
import vllm_trees

from sphinxext_attn.render.jsonout import render_json


def _row(analysis, name):
    return next(r for r in analysis.backends if r.name == name)


@pytest.mark.realtree
@pytest.mark.parametrize("version", ["0.33.0", "0.34.0"])
def test_flashmla_compute_capability_is_what_the_full_check_accepts(version):
    analysis = vllm_trees.analysis(version, profile="runtime")
    row = _row(analysis, "FLASHMLA")
    assert row.compute_capability == "9.x"
    assert row.supports["compute_capabilities"] == ["9.0", "10.0", "10.3"]
    assert row.accepts["compute_capabilities"] == ["9.0"]
    note = row.notes["Compute Cap."]
    assert "also accepts 10.0, 10.3" in note
    assert '"FlashMLA Dense is only supported on Hopper devices."' in note
    assert "(vllm/v1/attention/ops/flashmla.py:" in note
    data = json.loads(render_json(analysis))
    flashmla = next(b for b in data["backends"] if b["name"] == "FLASHMLA")
    assert flashmla["supports"]["compute_capabilities"] == ["9.0", "10.0", "10.3"]
    assert flashmla["accepts"]["compute_capabilities"] == ["9.0"]
    for backend in data["backends"]:  # the same shape as supports, every row
        if "supports" in backend:
            assert set(backend["accepts"]) - {"unknown"} == set(backend["supports"])


@pytest.mark.realtree
def test_0_30_routed_composite_head_sizes_and_the_engine_config_it_assumes():
    row = _row(vllm_trees.analysis("0.30.0", profile="runtime"), "TRITON_FLASH_ATTN")
    assert row.head_sizes == ("512",)
    assert row.supports["head_sizes"] == [256, 512]
    note = row.notes["Head Sizes"]
    assert "also accepts 256" in note and "causal route requires FlashAttention v4" in note
    assert "triton_flash_attn.py:" in note
    assert "attention_config.flash_attn_version=default (None)" in note
