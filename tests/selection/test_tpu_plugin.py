"""TPU through tpu-inference 0.32.0 with vLLM 0.32.0: the decision of
``TpuPlatform.get_attn_backend_cls`` as written, read from the real releases."""

from __future__ import annotations

import json

import pytest
from vllm_trees import plugin_tree, tree

from sphinxext_attn.cli.main import main

pytestmark = pytest.mark.realtree

PALLAS = "tpu_inference.layers.vllm.backends.flash_attn.PallasAttentionBackend"
PALLAS_MLA = "tpu_inference.layers.vllm.backends.flash_attn_mla.PallasMLAttentionBackend"


def _select(capsys: pytest.CaptureFixture[str], *flags: str, plugin: bool = True) -> dict:
    args = ["select", "--root", str(tree("0.32.0")), "--platform", "tpu", "--format", "json"]
    if plugin:
        args += ["--plugin", str(plugin_tree("tpu-inference", "0.32.0"))]
    assert main([*args, *flags, "--no-cache"]) == 0
    return json.loads(capsys.readouterr().out)


def test_non_mla_and_mla_layers_get_the_pallas_backends(capsys):
    plain = _select(capsys)
    assert (plain["selected"], plain["class_path"]) == ("FLASH_ATTN", PALLAS)
    mla = _select(capsys, "--mla")
    assert (mla["selected"], mla["class_path"]) == ("FLASH_ATTN_MLA", PALLAS_MLA)
    assert "ignored_request" not in plain and "ignored_request" not in mla


def test_a_request_tpu_does_not_run_is_ignored_and_said_so(capsys):
    asked = _select(capsys, "--backend", "FLASHINFER")
    assert (asked["selected"], asked["class_path"]) == ("FLASH_ATTN", PALLAS)
    assert asked["selected_backend_ignored"] is True
    assert asked["ignored_request"] == (
        "FLASHINFER asked for: ignored on this platform, FLASH_ATTN used "
        "(tpu_inference/platforms/tpu_platform.py:251: Cannot use "
        "AttentionBackendEnum.FLASHINFER backend on TPU. Setting to FLASH_ATTN.)"
    )
    mla = _select(capsys, "--mla", "--backend", "TRITON_ATTN")
    assert mla["selected"] == "FLASH_ATTN_MLA"
    assert mla["ignored_request"].startswith("TRITON_ATTN asked for: ignored")
    kept = _select(capsys, "--backend", "FLASH_ATTN")
    assert kept["selected"] == "FLASH_ATTN" and "ignored_request" not in kept


def test_a_registered_backend_with_mla_is_refused_and_passes_without(capsys):
    registered = "is_registered_attention_backend=true"
    refused = _select(capsys, "--mla", "--backend", "FLASHINFER", "--assume", registered)
    assert refused["selected"] is None
    assert refused["refused"] and refused["error"] == (
        "ValueError: --attention-backend flashinfer does not support MLA models."
    )
    assert refused["assumptions"] == [registered]
    passed = _select(capsys, "--backend", "FLASHINFER", "--assume", registered)
    assert passed["selected"] == "FLASHINFER" and "ignored_request" not in passed


def test_without_tpu_inference_the_answer_says_how_to_give_it(capsys):
    alone = _select(capsys, plugin=False)
    assert alone["selected"] is None
    assert "tpu_inference, which is not given" in alone["error"]
    assert "--plugin DIR" in alone["error"]


def test_bad_plugin_and_backend_are_one_line_exit_2(capsys, tmp_path):
    root = str(tree("0.32.0"))
    assert main(["select", "--root", root, "--plugin", str(tmp_path), "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--plugin {tmp_path}: holds no plugin package" in err
    plugin = str(plugin_tree("tpu-inference", "0.32.0"))
    args = ["select", "--root", root, "--plugin", plugin, "--platform", "tpu"]
    assert main([*args, "--backend", "NOPE", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--backend: 'NOPE' is not a backend of this release" in err


def test_feature_rows_are_the_tpu_classes_and_what_they_declare():
    from sphinxext_attn.analysis import analyze
    from sphinxext_attn.model.environment import Environment
    from sphinxext_attn.model.key import AnalysisKey
    from sphinxext_attn.source.plugin_platforms import read_plugins

    root = str(tree("0.32.0"))
    plugins = read_plugins(root, [str(plugin_tree("tpu-inference", "0.32.0"))])
    environment = Environment(platform="tpu")
    part = analyze(AnalysisKey(root, environment=environment, part="features", plugins=plugins))
    rules = [(r.conditions, r.outcome) for r in part.platform.rules]
    assert rules == [(("(use_mla)",), "FLASH_ATTN_MLA"), (("not ((use_mla))",), "FLASH_ATTN")]
    rows = {r.name: r for r in part.backends}
    assert {n: r.class_path for n, r in rows.items()} == {
        "FLASH_ATTN": PALLAS,
        "FLASH_ATTN_MLA": PALLAS_MLA,
    }
    standard, mla = rows["FLASH_ATTN"], rows["FLASH_ATTN_MLA"]
    assert (standard.table, mla.table) == ("standard", "mla")
    # PallasAttentionBackend declares supports_attn_type and nothing else asked
    assert standard.cell("Attention Types") == "Decoder, Encoder Only"
    assert sorted(standard.undeclared) == sorted(
        [
            "DCP",
            "Dtypes",
            "Head Sizes",
            "KV Dtypes",
            "Block Sizes",
            "MM Prefix",
            "Non-Causal",
            "Sink",
            "Sparse",
        ]
    )
    assert standard.cell("Dtypes") == "not declared"
    assert standard.notes["Dtypes"].endswith(
        "vLLM then assumes its base class's answer: fp16, bf16"
    )
    assert "Attention Types" in mla.undeclared and mla.cell("Attention Types") == "not declared"
    assert all(r.compute_capability == "N/A" for r in part.backends)
    # the builder inherits vLLM's _cudagraph_support: not the plugin's statement
    assert standard.cudagraph_support == "not declared (PallasAttentionMetadataBuilder)"


def test_the_page_command_adds_the_tpu_section(tmp_path, capsys):
    out = tmp_path / "page.md"
    args = ["--root", str(tree("0.32.0")), "--platform", "tpu", "-o", str(out)]
    plugin = str(plugin_tree("tpu-inference", "0.32.0"))
    assert main([*args, "--plugin", plugin, "--no-cache"]) == 0
    page = out.read_text(encoding="utf-8")
    section = page[page.index("## Backend Selection (TPU)") :]
    assert "| 1 | `(use_mla)` | `FLASH_ATTN_MLA` |" in section
    assert "| 2 | `not ((use_mla))` | `FLASH_ATTN` |" in section
    assert "## MLA Decode Backends (TPU)" in section
    assert "| `FLASH_ATTN` | not declared (PallasAttentionMetadataBuilder) |" in section
    assert "Traceback" not in capsys.readouterr().err
