"""``select --model-config`` and the case key ``model_config`` on a small tree:
one JSON layer kind per group, flags override, bad input is one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures import TINY, model_tree

from sphinxext_attn.cli.main import main


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    root = model_tree(tmp_path / "tree")
    folder = tmp_path / "tiny"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(TINY))
    return root, folder


def test_json_has_one_kind_per_group_with_derivations(setup, capsys):
    root, folder = setup
    args = ["select", "--root", str(root), "--no-cache", "--model-config", str(folder)]
    assert main([*args, "--format", "json", "--kv-cache-dtype", "fp8"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["architecture"]["class"] == "vllm.model_executor.models.tiny.TinyForCausalLM"
    layers = data["layers"]
    assert [(k["count"], k["config"]["has_sliding_window"]) for k in layers] == [
        (2, True),
        (1, False),
    ]
    first = layers[0]
    assert first["config"]["kv_cache_dtype"] == "fp8" and first["config"]["attn_type"] == "decoder"
    assert first["derivation"]["kv_cache_dtype"]["code"] == "given on the command line"
    assert first["derivation"]["head_size"]["code"].startswith(
        "vllm/transformers_utils/model_arch_config_convertor.py:"
    )
    assert "selected" in first and "priorities" in first and "start_error" in first


def test_text_names_the_model_and_each_kind(setup, capsys):
    root, folder = setup
    args = ["select", "--root", str(root), "--no-cache", "--model-config", str(folder)]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert text.startswith("model: TinyForCausalLM -> vllm.model_executor.models.tiny.")
    assert "2 x layer: head size 64, bf16, KV cache auto, decoder, sinks, sliding window" in text


def test_cases_with_model_config_answer_per_model(setup, tmp_path, capsys):
    root, folder = setup
    cases = tmp_path / "cases.json"
    cases.write_text(
        json.dumps(
            [
                {"model_config": "tiny", "capability": "8.0", "config": {"kv_cache_dtype": "fp8"}},
                {"config": {"head_size": 64}, "capability": "9.0"},
            ]
        )
    )
    out = tmp_path / "out.json"
    assert (
        main(["select", "--root", str(root), "--no-cache", "--cases", str(cases), "-o", str(out)])
        == 0
    )
    model, plain = json.loads(out.read_text())
    assert [k["count"] for k in model["layers"]] == [2, 1]
    assert {k["config"]["kv_cache_dtype"] for k in model["layers"]} == {"fp8"}
    assert "layers" not in plain and "priorities" in plain


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--model-config", "/nonexistent/x"], "--model-config: '/nonexistent/x' is neither"),
        (["--block-size", "16"], "--block-size: not with --model-config"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(setup, capsys, extra, words):
    root, folder = setup
    args = ["select", "--root", str(root), "--no-cache", "--model-config", str(folder), *extra]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err, err


def test_a_kind_with_unknown_fields_leaves_the_next_kinds_in_the_text():
    """A layer kind whose fields were not evaluated says so, and the kinds after it
    are still written (``continue`` -> ``break`` ended the text there)."""
    from sphinxext_attn.cli.model_select import render_model_text

    config = {
        "head_size": 128, "dtype": "bf16", "kv_cache_dtype": "auto", "attn_type": "decoder",
        "use_mla": False, "use_sparse": False, "has_sink": False, "has_sliding_window": False,
    }  # fmt: skip
    result = {
        "architecture": {"name": "Tiny", "class": "TinyForCausalLM", "registered_at": "m.py:1"},
        "layers": [
            {"count": 2, "config": config, "unknown_fields": {"head_size": "not read"}},
            {"count": 3, "config": config, "selected": "FLASH_ATTN", "derivation": {}},
        ],
    }
    lines = render_model_text(result).splitlines()
    assert lines[1:] == [
        "2 x layer: head size 128, bf16, KV cache auto, decoder",
        "    unknown head_size: not read",
        "    selected: not evaluated",
        "3 x layer: head size 128, bf16, KV cache auto, decoder",
        "    selected: FLASH_ATTN",
    ]
