"""The selector's tables per platform and its environment controls, against ``select``.

Each platform's table (ROCm per GPU, CPU's outcome table) and each setting of
the facts the decisions read (``VLLM_ROCM_USE_AITER``, ``installed.aiter``,
``VLLM_HAS_FLASHINFER_CUBIN``, ...) is read back the way the widget reads it
(:func:`predict`) and compared with a full decision on a machine where the facts
are set so, and with vLLM's own recorded ROCm selections.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import vllm_trees

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.environment import Environment
from sphinxext_attn.model.selection import Config, Decision
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.selector.facts import environment_with, state_for, values_of
from sphinxext_attn.selector.grid import DIMS, GRID
from sphinxext_attn.selector.predict import predict, sample_configs
from sphinxext_attn.selector.table import build_selector_table
from sphinxext_attn.selector.variants import build_variant, variants
from sphinxext_attn.source.tree import SourceTree

pytestmark = pytest.mark.realtree

#: the GPUs vLLM 0.33.0's rocm.py names (and derives a capability for)
ROCM_033 = ["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1200", "gfx1201", "gfx1250"]


@pytest.fixture(scope="module")
def tree033(source_tree_033: SourceTree) -> SourceTree:
    return source_tree_033


@pytest.fixture(scope="module")
def tables(
    selector_tables_033: dict[tuple[str, str], dict[str, Any]],
) -> dict[tuple[str, str], dict[str, Any]]:
    """The tables the tests read, each built once per session (conftest.py)."""
    return selector_tables_033


def _shape(decision: Decision | None) -> Any:
    if decision is None:
        return None
    picks = sorted(c["backend"] for c in decision.candidates)
    return decision.selected, decision.priorities, picks, decision.raised


def _selector(tree: SourceTree, platform: str, arch: str, facts: dict[str, str]) -> Selector:
    fixed = {n: v for n, v in facts.items() if v != ""}  # "": nobody set it
    env = environment_with(Environment(platform=platform, arch=arch), fixed)
    return Selector(Interpreter(tree, Machine(env)))


def test_a_page_offers_every_gpu_the_release_names(tree033: SourceTree) -> None:
    found = variants(tree033, ("cuda", "rocm", "xpu", "cpu"), Environment())
    assert found == [("cuda", ""), *(("rocm", a) for a in ROCM_033), ("xpu", ""), ("cpu", "")]
    assert variants(tree033, ("cuda",), Environment()) == [("cuda", "")]


def test_the_controls_are_the_facts_that_change_a_decision(
    tables: dict[tuple[str, str], dict[str, Any]],
) -> None:
    def controls(key: tuple[str, str]) -> dict[str, tuple[Any, bool]]:
        return {f["name"]: (f["default"], f["guessed"]) for f in tables[key]["facts"]}

    assert controls(("rocm", "gfx942")) == {
        "VLLM_ROCM_USE_AITER": ("unset", False),
        "VLLM_ROCM_USE_AITER_MHA": ("unset", False),
        "VLLM_ROCM_USE_AITER_MLA": ("unset", False),
        "installed.aiter": ("", True),  # nobody set it: decided both ways
        # ROCM_AITER_MLA's non-causal check probes aiter's mla_decode_fwd for `causal`
        "features.aiter": ("true", False),
    }
    assert controls(("rocm", "gfx1201")) == {
        "VLLM_ROCM_USE_AITER": ("unset", False),
        "installed.aiter": ("", True),
    }
    cuda = controls(("cuda", ""))
    assert cuda["VLLM_HAS_FLASHINFER_CUBIN"] == ("unset", False)
    assert cuda["network"] == ("false", False)
    assert "CUDA_HOME" not in cuda  # read, but it changes no decision on the grid


def test_values_of_a_fact() -> None:
    assert values_of("VLLM_ROCM_USE_AITER", "unset") == ("unset", "1", "0")
    assert values_of("installed.aiter", "true") == ("true", "false")
    assert values_of("arch", "gfx942") is None
    assert values_of("attention_config.flash_attn_version", "default (None)") is None


def test_the_settings_walk_as_explored(tables: dict[tuple[str, str], dict[str, Any]]) -> None:
    table = tables[("rocm", "gfx942")]
    base = {f["name"]: f["default"] for f in table["facts"]}
    # MHA is read only with AITER on: alone it changes nothing and is not a setting
    assert state_for(table, {**base, "VLLM_ROCM_USE_AITER_MHA": "0"}) == ("", [])
    assert state_for(table, {**base, "VLLM_ROCM_USE_AITER": "1"}) == ("VLLM_ROCM_USE_AITER=1", [])
    both = {**base, "VLLM_ROCM_USE_AITER": "1", "VLLM_ROCM_USE_AITER_MHA": "0"}
    assert state_for(table, both) == ("VLLM_ROCM_USE_AITER=1;VLLM_ROCM_USE_AITER_MHA=0", [])


@pytest.mark.parametrize("variant", [("rocm", "gfx942"), ("rocm", "gfx1201"), ("cpu", "")])
def test_every_setting_agrees_with_select(
    tables: dict[tuple[str, str], dict[str, Any]], tree033: SourceTree, variant: tuple[str, str]
) -> None:
    """Random configurations with random settings of every control: the widget's
    reading is `select`'s decision on a machine set so (conditional included)."""
    table = tables[variant]
    rng = random.Random(11)
    selectors: dict[str, Selector] = {}
    wrong = []
    for config in sample_configs(GRID, 120, 13):
        facts = {f["name"]: rng.choice(f["values"]) for f in table["facts"]}
        key = json.dumps(facts, sort_keys=True)
        if key not in selectors:
            selectors[key] = _selector(tree033, *variant, facts)
        truth = selectors[key].decide(config)
        if _shape(predict(table, config, facts)) != _shape(truth):
            wrong.append((config.describe(), facts))
    assert wrong == []


def test_cuda_settings_agree_with_select(
    tables: dict[tuple[str, str], dict[str, Any]], tree033: SourceTree
) -> None:
    """One control set otherwise at a time (the page holds those), on CUDA, where
    configurations with attention sinks on SM 10.x turn on the FlashInfer cubins."""
    table = tables[("cuda", "")]
    base = {f["name"]: f["default"] for f in table["facts"]}
    sink = Config(capability="10.0", dtype="bf16", head_size=64, has_sink=True)
    for name, value, selected in (
        ("VLLM_HAS_FLASHINFER_CUBIN", "unset", "FLASH_ATTN"),
        ("VLLM_HAS_FLASHINFER_CUBIN", "1", "FLASHINFER"),
        ("network", "true", "FLASHINFER"),
    ):
        facts = {**base, name: value}
        guess = predict(table, sink, facts)
        assert guess is not None and guess.selected == selected, (name, value)
        assert _shape(guess) == _shape(_selector(tree033, "cuda", "", facts).decide(sink))
    rng = random.Random(5)
    selectors: dict[str, Selector] = {}
    differ = []
    for config in sample_configs(GRID, 80, 17):
        fact = rng.choice(table["facts"])
        facts = {**base, fact["name"]: rng.choice(fact["values"])}
        key = json.dumps(facts, sort_keys=True)
        if key not in selectors:
            selectors[key] = _selector(tree033, "cuda", "", facts)
        if _shape(predict(table, config, facts)) != _shape(selectors[key].decide(config)):
            differ.append(config.describe())
    # the default table's own known misses (selector-table 0.33.0-sample) aside
    assert len(differ) <= 1, differ


def test_a_combination_the_page_does_not_hold_is_flagged(
    tables: dict[tuple[str, str], dict[str, Any]],
) -> None:
    table = tables[("cuda", "")]
    base = {f["name"]: f["default"] for f in table["facts"]}
    sink = Config(capability="10.0", has_sink=True)
    # with the cubins the code never asks the network: the page holds the answer
    both = {**base, "VLLM_HAS_FLASHINFER_CUBIN": "1", "network": "true"}
    assert state_for(table, both) == ("VLLM_HAS_FLASHINFER_CUBIN=1", [])
    # 0 reads as unset does: it changes nothing, with or without the network
    assert state_for(table, {**base, "VLLM_HAS_FLASHINFER_CUBIN": "0", "network": "true"}) == (
        "network=true",
        [],
    )
    # two facts each read on the page's machine: their combination is left to select
    both = {**base, "network": "true", "which.nvcc": "false"}
    assert state_for(table, both) == ("network=true", ["which.nvcc"])
    assert predict(table, sink, both) is None


def _rocm_cases() -> list[tuple[str, dict[str, Any]]]:
    folder = vllm_trees.shared_dir() / "vllm" / "select"
    out = []
    for path in sorted(Path(folder).glob("rocm-0.33.0-*.json")):
        for case in json.loads(path.read_text(encoding="utf-8")):
            out.append((path.stem, case))
    return out


def test_recorded_rocm_selections(tables: dict[tuple[str, str], dict[str, Any]]) -> None:
    """vLLM's own ROCm decisions (``rocm-0.33.0-*.json``, 1,200 cases): every one
    reads back from the widget's table as vLLM picked it, with its list, the KV
    connector and the model's attention type (an encoder-decoder model) included."""
    compared = 0
    wrong = []
    archs = set()
    for stem, case in _rocm_cases():
        archs.add(case["arch"])
        table = tables[("rocm", case["arch"])]
        facts = {f["name"]: f["default"] for f in table["facts"]}
        facts.update({k: v for k, v in (case.get("env") or {}).items() if k in facts})
        if case.get("aiter_installed") is not None:
            facts["installed.aiter"] = "true" if case["aiter_installed"] else "false"
        config = replace(Config.from_case(case), model_attn_type=case.get("model_attn_type"))
        guess = predict(table, config, facts)
        assert guess is not None, config.describe()  # every case is on the grid
        compared += 1
        if (guess.selected, guess.priorities) != (case["selected"], case["priorities"]):
            wrong.append((stem, config.describe()))
    assert compared == 1200
    assert wrong == []
    # the controls are where the code reads them: ROCm's tables, not CPU's or XPU's
    for arch in archs:
        dims = {d for d, _ in tables[("rocm", arch)]["dims"]}
        assert {"use_kv_connector", "model_attn_type"} <= dims


def test_layer_settings_only_where_the_code_reads_them(
    tables: dict[tuple[str, str], dict[str, Any]], tree033: SourceTree
) -> None:
    """The KV connector and the model's attention type are settings of ROCm's tables
    (its priority function takes the connector; get_valid_backends reads the model's
    type), not of CPU's (whose rules read neither) nor CUDA's grid."""
    keys = [("rocm", "gfx942"), ("cpu", ""), ("cuda", "")]
    dims = {key: [d for d, _ in tables[key]["dims"]] for key in keys}
    assert dims[("rocm", "gfx942")][-2:] == ["use_kv_connector", "model_attn_type"]
    assert "use_kv_connector" not in dims[("cpu", "")]
    assert dims[("cuda", "")] == list(GRID)
    gfx942 = tables[("rocm", "gfx942")]
    plain = Config(dtype="bf16", head_size=128)
    for config in (plain, replace(plain, use_kv_connector=True)):
        for model in (None, "encoder_decoder"):
            config = replace(config, model_attn_type=model)
            facts = {"installed.aiter": "false"}
            truth = _selector(tree033, "rocm", "gfx942", facts).decide(config)
            assert _shape(predict(gfx942, config, facts)) == _shape(truth), config.describe()


def test_a_rocm_page_starts_on_the_machines_gpu(tree033: SourceTree) -> None:
    """``:platforms: rocm``: every GPU's table ships; the page starts on the GPU a
    ROCm machine has when none is named (gfx942), and builds nothing for CUDA."""
    built = build_selector_table(str(tree033.root), sample=0, platforms=("rocm",))
    shipped = built.shipped()
    assert built.default == "rocm:gfx942" and shipped is not None
    assert shipped["default"] == "rocm:gfx942"
    assert list(shipped["variants"]) == [f"rocm:{a}" for a in ROCM_033]
    assert built.table is shipped["variants"]["rocm:gfx942"]
    assert built.problems == []


def _xpu_configs(count: int, seed: int) -> list[Config]:
    """Random configurations, and as many MLA ones that reach XPU's check of
    FlashAttention MLA (head size 576, most settings it accepts)."""
    rng = random.Random(seed)
    mla = []
    for config in sample_configs(GRID, count, seed):
        config = replace(config, use_mla=True, use_sparse=False, head_size=576)
        if rng.random() < 0.6:
            block = rng.choice([None, 64, 128])
            plain = dict(has_sink=False, use_mm_prefix=False, use_non_causal=False)
            config = replace(config, attn_type="DECODER", block_size=block, **plain)
        mla.append(config)
    return sample_configs(GRID, count, seed + 1) + mla


def xpu_disagreements(version: str, count: int, seed: int = 3) -> tuple[list[str], Any, int]:
    """The configurations where the XPU table, read as the widget reads it, differs
    from ``select --platform xpu``; the table; how many were compared."""
    tree = SourceTree(str(vllm_trees.tree(version)))
    table = build_variant(tree, Environment(), ("xpu", ""))
    selector = _selector(tree, "xpu", "", {})
    configs = _xpu_configs(count, seed)
    wrong = [
        c.describe()
        for c in configs
        if _shape(predict(table, c)) != _shape(selector.decide(c)) or predict(table, c) is None
    ]
    return wrong, table, len(configs)


def test_xpu_table_asks_the_mla_check_once_per_rule() -> None:
    """XPU 0.33: the MLA branch asks FlashAttention MLA's own check; the check is a
    yes/no setting of the outcome table (its reasons tabulated like a CUDA
    backend's), so the outcomes depend on six settings, not on all of them."""
    wrong, table, compared = xpu_disagreements("0.33.0", 40)
    assert table["checks"] == ["XPUFlashAttnMLABackend"]
    prio = next(iter(table["caps"].values()))["priorities"]
    names = [*DIMS, *table["checks"]]
    assert [names[k] for k in prio["keys"]] == [
        "dtype",
        "head_size",
        "use_mla",
        "use_sparse",
        "use_mm_prefix",
        "XPUFlashAttnMLABackend",
    ]
    outcomes = {tuple(item) for item in table["lists"]}
    assert ("selected", "FLASH_ATTN_MLA") in outcomes and ("selected", "TRITON_MLA") in outcomes
    assert wrong == [] and compared == 80


@pytest.mark.parametrize("version", ["0.23.0", "0.26.0"])
def test_xpu_table_on_older_releases(version: str) -> None:
    """0.26: rules without a check (MLA is always Triton's); 0.23: rules that
    first rebind a module global (``set_kv_cache_layout``'s ``global``), answered
    like the rest."""
    wrong, table, _ = xpu_disagreements(version, 30)
    assert "checks" not in table
    assert wrong == []
    kinds = {item[0] for item in table["lists"]}
    assert kinds == {"selected"}


@pytest.mark.slow
@pytest.mark.parametrize("version", ["0.23.0", "0.26.0", "0.33.0", "0.34.0"])
def test_xpu_table_agrees_with_select_on_a_few_hundred(version: str) -> None:
    wrong, _, compared = xpu_disagreements(version, 150, seed=29)
    assert compared == 300 and wrong == []
