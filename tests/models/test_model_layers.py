"""A model's layers read from the release's registry, convertor and model file
(small invented trees): each field from the code that gives it, grouped kinds,
and unknown with a reason where the code cannot be followed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures import TINY, model_tree

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.models.answer import _kinds
from sphinxext_attn.models.architecture import find_architecture
from sphinxext_attn.models.config_file import load_model_config
from sphinxext_attn.models.layers import ModelUnknown, read_model
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.source.tree import SourceTree


@pytest.fixture
def interp(tmp_path: Path) -> Interpreter:
    return Interpreter(SourceTree(model_tree(tmp_path / "tree")), Machine())


def kinds(interp: Interpreter, data: dict, capability: str = "9.0", **overrides):
    model = read_model(interp, data, capability, overrides)
    return [(layer.values, layer.unknown, count) for layer, count in _kinds(model)]


def test_the_merged_registry_names_the_class_and_a_later_table_wins(interp):
    arch = find_architecture(interp.tree, ["Missing", "ShadowedModel"])
    assert not isinstance(arch, str)
    assert (arch.module, arch.class_name, arch.table) == (
        "vllm.model_executor.models.tiny_encoder",
        "TinyEncoderModel",
        "_EMBEDDING_MODELS",
    )
    assert arch.location.line == 9
    why = find_architecture(interp.tree, ["NotMerged"])
    assert isinstance(why, str) and "_VLLM_MODELS" in why


def test_layer_types_group_sliding_and_full_layers_with_sinks(interp):
    found = kinds(interp, TINY)
    assert [(v["has_sliding_window"], v["has_sink"], count) for v, _, count in found] == [
        (True, True, 2),
        (False, True, 1),
    ]
    values = found[0][0]
    assert (values["head_size"], values["dtype"], values["attn_type"]) == (64, "bf16", "DECODER")
    assert values["num_heads"] is None  # the plain layer passes no num_heads to the selector


def test_head_dim_wins_over_hidden_size_per_head(interp):
    found = kinds(interp, {**TINY, "head_dim": 128})
    assert {v["head_size"] for v, _, _ in found} == {128}


def test_a_window_passed_down_from_the_decoder_layer_is_evaluated_per_layer(interp):
    data = {
        **TINY,
        "architectures": ["OddEvenForCausalLM"],
        "num_hidden_layers": 4,
        "layer_types": ["full_attention"] * 4,  # no global window in the cache config
    }
    found = kinds(interp, data)
    assert [(v["has_sliding_window"], c) for v, _, c in found] == [(True, 2), (False, 2)]
    assert [v["has_sink"] for v, _, _ in found] == [False, False]
    # without layer_types the odd layers take the cache config's window: the config's
    # sliding_window as transformers leaves it, not read here
    del data["layer_types"]
    found = kinds(interp, data)
    assert [("has_sliding_window" in u, c) for _, u, c in found] == [(False, 2), (True, 2)]


def test_mla_head_size_and_heads_come_from_the_convertor_and_the_mla_layer(interp):
    data = {
        "architectures": ["LatentForCausalLM"],
        "model_type": "latent",
        "num_attention_heads": 16,
        "num_hidden_layers": 2,
        "kv_lora_rank": 512,
        "qk_rope_head_dim": 64,
        "torch_dtype": "bfloat16",
    }
    ((values, unknown, count),) = kinds(interp, data)
    assert (values["use_mla"], values["head_size"], values["num_heads"], count) == (
        True,
        576,
        16,
        2,
    )
    assert not unknown and values["has_sliding_window"] is False


def test_an_encoder_only_pooling_model_in_float32_runs_in_float16(interp):
    data = {
        "architectures": ["TinyEncoderModel"],
        "model_type": "tiny_bert",
        "hidden_size": 768,
        "num_attention_heads": 12,
        "num_hidden_layers": 2,
        "torch_dtype": "float32",
    }
    ((values, _, _),) = kinds(interp, data)
    assert (values["attn_type"], values["dtype"]) == ("ENCODER_ONLY", "fp16")


@pytest.mark.parametrize(("capability", "dtype"), [("9.0", "bf16"), ("7.5", "fp16")])
def test_a_float32_decoder_runs_in_the_platforms_first_dtype(interp, capability, dtype):
    found = kinds(interp, {**TINY, "torch_dtype": "float32"}, capability)
    assert {v["dtype"] for v, _, _ in found} == {dtype}


def test_is_causal_false_makes_the_layers_encoder_only(interp):
    found = kinds(interp, {**TINY, "is_causal": False})
    assert {v["attn_type"] for v, _, _ in found} == {"ENCODER_ONLY"}


def test_a_flag_overrides_what_the_model_implies(interp):
    found = kinds(interp, TINY, kv_cache_dtype="fp8", dtype="fp16")
    assert {(v["kv_cache_dtype"], v["dtype"]) for v, _, _ in found} == {("fp8", "fp16")}


def test_no_dtype_and_a_global_window_are_unknown_with_reasons(interp):
    data = {**TINY, "architectures": ["OddEvenForCausalLM"]}
    del data["torch_dtype"], data["layer_types"]
    data["num_hidden_layers"] = 1
    ((values, unknown, _),) = kinds(interp, data)
    assert "safetensors" in unknown["dtype"]
    assert "dtype" not in values
    # even layer 0 has its own window: known
    assert values["has_sliding_window"] is True
    plain = {**TINY, "architectures": ["TinyEncoderModel"], "model_type": "x"}
    del plain["layer_types"]
    ((_, unknown, _),) = kinds(interp, plain)
    assert "transformers' config class" in unknown["has_sliding_window"]


def test_an_architecture_outside_the_registry_is_a_reason(interp):
    with pytest.raises(ModelUnknown, match="Transformers backend or remote code"):
        read_model(interp, {**TINY, "architectures": ["RemoteModel"]}, "9.0", {})


def test_config_file_is_a_file_or_folder_with_architectures(tmp_path: Path):
    (tmp_path / "config.json").write_text(json.dumps(TINY))
    assert load_model_config(tmp_path)[1] == TINY
    (tmp_path / "bad.json").write_text("[1]")
    with pytest.raises(ValueError, match="not a JSON object"):
        load_model_config(tmp_path / "bad.json")
    (tmp_path / "none.json").write_text("{}")
    with pytest.raises(ValueError, match="'architectures'"):
        load_model_config(tmp_path / "none.json")
    with pytest.raises(ValueError, match="neither a config.json"):
        load_model_config(tmp_path / "missing")
