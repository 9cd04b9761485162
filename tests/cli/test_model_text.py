"""The model answer in words (cli/model_select.py): a model not read, a layer
whose backend's implementation refuses it, backends rejected with their reasons;
and a case's model_config that is not a path."""

from __future__ import annotations

from pathlib import Path

import pytest

from sphinxext_attn.cli.checks import BadInput
from sphinxext_attn.cli.model_select import check_model_case, render_model_text, start_text

LAYER = {
    "count": 2,
    "config": {
        "head_size": 128,
        "dtype": "bf16",
        "kv_cache_dtype": "auto",
        "attn_type": "encoder_decoder",
        "use_mla": False,
        "use_sparse": True,
        "has_sink": False,
        "has_sliding_window": True,
    },
    "selected": "FLASH_ATTN",
    "start_error": "ValueError: no sliding window",
    "start_error_source": "vllm/v1/attention/backends/flash_attn.py:80",
    "rejected": {"FLASHINFER": ["sparse not supported", "head size"]},
    "derivation": {
        "head_size": {"value": 128, "config_keys": ["head_dim"], "code": "model.py:10"},
        "dtype": {"value": "bf16", "config_keys": [], "code": "model.py:12"},
    },
}
RESULT = {
    "architecture": {"name": "MyModel", "class": "MyForCausalLM", "registered_at": "r.py:3"},
    "layers": [LAYER],
}


def test_a_model_not_read_says_why():
    assert render_model_text({"layers": [], "unknown": "no config.json"}) == (
        "model: not read (no config.json)\n"
    )


def test_a_layer_refused_at_start_and_the_backends_rejected_are_told():
    assert render_model_text(RESULT).splitlines() == [
        "model: MyModel -> MyForCausalLM (r.py:3)",
        "2 x layer: head size 128, bf16, KV cache auto, encoder-decoder, sparse, sliding window",
        "    selected: FLASH_ATTN",
        "    does not start: the implementation refuses the layer (ValueError: no sliding "
        "window, vllm/v1/attention/backends/flash_attn.py:80)",
        "    not FLASHINFER: sparse not supported; head size",
        "    head_size = 128 from head_dim (model.py:10)",
        "    dtype = bf16 (model.py:12)",
    ]


def test_a_layer_no_backend_takes_is_said_as_vllm_raising():
    layer = {**LAYER, "selected": None, "start_error": "", "rejected": {}, "derivation": {}}
    lines = render_model_text({**RESULT, "layers": [layer]}).splitlines()
    assert lines[2:] == ["    selected: none (vLLM raises)"]


def test_a_refusal_at_start_in_plain_words():
    data = {"selected": "FLASH_ATTN", "start_error": "ValueError: x", "start_error_source": "a:1"}
    assert start_text(data) == (
        "does not start: FLASH_ATTN's implementation refuses this layer at construction "
        "(ValueError: x; a:1)\n"
    )
    assert start_text({"selected": "FLASH_ATTN"}) == ""
    assert start_text({"start_unknown": "no tree class"}) == "start not evaluated: no tree class\n"


@pytest.mark.parametrize("value", [3, None, ["m.json"]])
def test_a_case_model_config_must_be_a_path(value):
    with pytest.raises(BadInput) as caught:
        check_model_case(4, value, Path("."))
    assert str(caught.value) == f"case 4: model_config: {value!r} is not a path"
