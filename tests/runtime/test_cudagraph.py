"""The CUDA Graphs column on a small tree written the way vLLM writes builders:
a class attribute, a classmethod returning it, a classmethod reading the engine
config (an unknown naming what it reads), and a builder that states nothing."""

from __future__ import annotations

import json

from cudagraph_trees import NAMES, cudagraph_tree
from treebuilder import rows

from sphinxext_attn.analysis.pipeline import analyze
from sphinxext_attn.render.jsonout import render_json


def test_levels_read_as_vllm_writes_builders(tmp_path):
    analysis = analyze(cudagraph_tree(tmp_path))
    graphs = {n: rows(analysis, n)[0].cudagraph for n in NAMES}
    assert graphs["ATTRIBUTE_ATTN"] == {"level": "UNIFORM_BATCH"}
    assert graphs["METHOD_ATTN"] == {"level": "ALWAYS"}
    assert graphs["SILENT_ATTN"] == {"level": "NEVER"}  # the base builder's default
    why = graphs["CONFIG_ATTN"]["unknown"]
    assert "level" not in graphs["CONFIG_ATTN"]
    assert why.startswith("depends on the engine configuration (vllm_config.speculative_config)")
    assert "get_builder_cls" in graphs["NO_BUILDER_ATTN"]["unknown"]
    # the GPU decides at import: which level on which GPU, not one guessed machine's
    gpu = graphs["IMPORT_TIME_ATTN"]["unknown"]
    assert gpu.startswith("depends on the GPU: UNIFORM_BATCH on 7.0, ")
    assert gpu.endswith("; ALWAYS on 9.0")
    config = rows(analysis, "CONFIG_ATTN")[0]
    assert config.cell("CUDA Graphs") == "?"
    assert rows(analysis, "ATTRIBUTE_ATTN")[0].cell("CUDA Graphs") == "UNIFORM_BATCH"


def test_json_key_is_the_level_name_or_an_explicit_unknown(tmp_path):
    data = json.loads(render_json(analyze(cudagraph_tree(tmp_path))))
    by_name = {b["name"]: b for b in data["backends"]}
    assert by_name["ATTRIBUTE_ATTN"]["cudagraph"] == "UNIFORM_BATCH"
    assert by_name["METHOD_ATTN"]["cudagraph"] == "ALWAYS"
    unknown = by_name["CONFIG_ATTN"]["cudagraph"]
    assert set(unknown) == {"unknown"} and "speculative_config" in unknown["unknown"]
    # the new key only: the other keys of a row keep their shape
    assert "CUDA Graphs" not in by_name["CONFIG_ATTN"]["unknown"]
    assert "CUDA Graphs" not in data["capability_columns"]


def test_the_page_profile_has_no_cudagraph_key(tmp_path):
    analysis = analyze(cudagraph_tree(tmp_path), profile="vllm-page")
    data = json.loads(render_json(analysis))
    assert all("cudagraph" not in b for b in data["backends"])
    assert "CUDA Graphs" not in analysis.column_choices()


def test_a_release_without_the_classmethod_reads_the_attribute(tmp_path):
    analysis = analyze(cudagraph_tree(tmp_path, old=True))
    graphs = {n: rows(analysis, n)[0].cudagraph for n in NAMES}
    assert graphs["ATTRIBUTE_ATTN"] == {"level": "UNIFORM_BATCH"}
    assert graphs["SILENT_ATTN"] == {"level": "NEVER"}
    # a builder that defines the classmethod itself is still asked it
    assert graphs["METHOD_ATTN"] == {"level": "ALWAYS"}
    assert "unknown" in graphs["CONFIG_ATTN"]
