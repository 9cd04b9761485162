"""vLLM 0.33.0's shared models (../shared/vllm/models): every layer kind vLLM
built, the selector configuration it asked with and the backend it got, and the
runs where the implementation then refused a layer (the engine does not start).
Differences are the exact list ``[models]`` of known_differences.toml."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import vllm_trees
from known import assert_exactly

from sphinxext_attn.cli.main import main

pytestmark = pytest.mark.realtree
FIELDS = (
    "head_size",
    "dtype",
    "kv_cache_dtype",
    "use_mla",
    "has_sink",
    "use_sparse",
    "use_mm_prefix",
    "attn_type",
    "has_sliding_window",
)
DTYPES = {"torch.bfloat16": "bf16", "torch.float16": "fp16", "torch.float32": "fp32"}


def _truth_kind(layer: dict) -> tuple:
    values = [DTYPES.get(layer[f], layer[f]) if f == "dtype" else layer[f] for f in FIELDS]
    return (*values, layer["num_heads"], layer["selected"])


def _our_kind(layer: dict) -> tuple:
    config = layer["config"]
    values = [config[f] for f in FIELDS]
    return (*values, layer["num_heads"], layer["selected"])


def test_every_layer_kind_and_start_refusal_of_the_shared_models(tmp_path: Path):
    tree = vllm_trees.tree("0.33.0")
    models = vllm_trees.shared_dir() / "vllm" / "models"
    truth = json.loads((models / "truth-0.33.0.json").read_text())
    cases = [
        {
            "model_config": str(models / run["model"]),
            "capability": run["capability"],
            "config": {"kv_cache_dtype": run["kv_cache_dtype"]},
        }
        for run in truth
    ]
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    out = tmp_path / "out.json"
    args = ["select", "--root", str(tree), "--no-cache", "--cases", str(tmp_path / "cases.json")]
    assert main([*args, "-o", str(out)]) == 0
    results = json.loads(out.read_text())
    differences = []
    unknown_fields = 0
    for run, result in zip(truth, results, strict=True):
        name = f"{run['model']} {run['capability']} {run['kv_cache_dtype']}"
        ours = {_our_kind(k): k["count"] for k in result["layers"]}
        unknown_fields += sum(len(k.get("unknown_fields", {})) for k in result["layers"])
        stopped = bool(run.get("init_error"))
        for i, layer in enumerate(run["layers"]):
            kind = _truth_kind(layer)
            partial = stopped and i == len(run["layers"]) - 1  # vLLM stopped in this kind
            if kind not in ours or (not partial and ours[kind] != layer["count"]):
                differences.append(f"{name}: layer kind {i}")
        refused = stopped and run["init_error"].startswith("ValueError")
        if refused != bool(result["start_error"]):
            differences.append(f"{name}: start_error")
    assert unknown_fields == 0
    assert len(results) == 60
    assert_exactly(differences, "models", "0.33.0")
