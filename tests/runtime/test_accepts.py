"""Cells true to vLLM's full check: a value the column's own method admits but
``supports_combination`` refuses in every configuration is not shown (the JSON's
``supports`` keeps the method's answer, ``accepts`` the full check's), with a
note naming where the refusal is written."""

from __future__ import annotations

import json

from accepts_trees import COMBINATION_SIGNATURE, NAMES, accepts_tree, one_checked_tree
from treebuilder import rows

from sphinxext_attn.analysis.pipeline import analyze
from sphinxext_attn.render.jsonout import render_json
from sphinxext_attn.render.markdown import render_markdown


def _rows(tmp_path, **kwargs):
    analysis = analyze(accepts_tree(tmp_path, **kwargs))
    return analysis, {n: rows(analysis, n)[0] for n in NAMES}


def test_a_gpu_the_combination_always_refuses_is_not_shown(tmp_path):
    _, by_name = _rows(tmp_path)
    dense = by_name["DENSE_ATTN"]
    assert dense.compute_capability == "9.x"
    assert dense.supports["compute_capabilities"] == ["9.0", "10.0", "10.3"]
    assert dense.accepts["compute_capabilities"] == ["9.0"]
    note = dense.notes["Compute Cap."]
    # the sparse branch accepts Blackwell, but the class is not sparse: no configuration
    assert "10.0, 10.3" in note and "only supported on Hopper" in note
    assert note.endswith("(vllm/v1/attention/ops/kernels.py:6)")


def test_head_and_block_sizes_narrowed_by_the_values_the_check_reads(tmp_path):
    _, by_name = _rows(tmp_path)
    routed = by_name["ROUTED_ATTN"]
    assert routed.head_sizes == ("512",)
    assert routed.supports["head_sizes"] == [256, 512]
    assert routed.accepts["head_sizes"] == [512]
    assert "also accepts 256" in routed.notes["Head Sizes"]
    assert "backends/checked.py:" in routed.notes["Head Sizes"]
    block = by_name["BLOCK_ATTN"]
    assert block.block_sizes == ("64", "128")
    assert block.supports["block_sizes"] == ["16", "64", "128"]
    assert block.accepts["block_sizes"] == ["64", "128"]


def test_the_engine_config_fields_a_refusal_reads_are_named(tmp_path):
    # no engine config is current while the docs build, so the route reads no field;
    # under vLLM's defaults it reads flash_attn_version and refuses alike: named
    _, by_name = _rows(tmp_path)
    configured = by_name["CONFIGURED_ATTN"]
    assert configured.head_sizes == ("128",)
    note = configured.notes["Head Sizes"]
    assert "also accepts 256" in note and "requires FlashAttention 4" in note
    assert note.endswith("(assuming attention_config.flash_attn_version=default (None))")
    assert "default engine config" not in note


def test_a_value_another_configuration_accepts_stays(tmp_path):
    # head size 512 is refused with an fp8 KV cache only: auto passes
    _, by_name = _rows(tmp_path)
    kv = by_name["KV_ATTN"]
    assert kv.head_sizes == ("128", "512")
    assert kv.accepts == kv.supports and not kv.notes


def test_refused_everywhere_singles_out_nothing(tmp_path):
    _, by_name = _rows(tmp_path)
    absent = by_name["ABSENT_ATTN"]
    assert absent.accepts["unknown"]["Compute Cap."].endswith(
        "refuses every configuration tried: the kernel package is not installed"
    )
    assert {k: v for k, v in absent.accepts.items() if k != "unknown"} == absent.supports
    assert not absent.notes


def test_the_interfaces_own_check_narrows_nothing(tmp_path):
    _, by_name = _rows(tmp_path)
    plain = by_name["PLAIN_ATTN"]
    assert plain.accepts == plain.supports and not plain.notes
    _, without = _rows(tmp_path / "old", with_check=False)
    for name in NAMES:  # a release whose interface asks no combination
        assert without[name].accepts == without[name].supports, name
        assert not without[name].notes


def test_json_keeps_supports_and_adds_accepts_of_the_same_shape(tmp_path):
    analysis, _ = _rows(tmp_path)
    data = json.loads(render_json(analysis))
    by_name = {b["name"]: b for b in data["backends"]}
    for backend in data["backends"]:
        if "supports" in backend:
            shape = set(backend["accepts"]) - {"unknown"}
            assert shape == set(backend["supports"]), backend["name"]
    dense = by_name["DENSE_ATTN"]
    assert dense["supports"]["compute_capabilities"] == ["9.0", "10.0", "10.3"]
    assert dense["accepts"]["compute_capabilities"] == ["9.0"]
    assert "Compute Cap." in dense["notes"]


def test_the_note_is_under_the_table(tmp_path):
    analysis, _ = _rows(tmp_path)
    text = render_markdown(analysis)
    assert "§ `DENSE_ATTN` Compute Cap.: the class's own check also accepts 10.0, 10.3" in text
    assert "| `DENSE_ATTN` |" in text


def test_the_page_profile_is_not_narrowed(tmp_path):
    analysis = analyze(accepts_tree(tmp_path), profile="vllm-page")
    data = json.loads(render_json(analysis))
    assert all("accepts" not in b for b in data["backends"])


TWO_REASONS = (
    """
from vllm.v1.attention.backend import AttentionBackend


class TwoBackend(AttentionBackend):
    @classmethod
    def get_supported_head_sizes(cls):
        return [64, 128, 256]
"""
    + COMBINATION_SIGNATURE
    + """\
        if head_size == 64:
            return "head size 64 needs the small kernel"
        if head_size == 256:
            return "head size 256 needs the large kernel"
        return None
"""
)


def test_the_note_gives_the_reason_of_the_first_value_refused(tmp_path):
    """64 and 256 are refused for different reasons: the note quotes the first
    (``refused[0]`` -> ``refused[-1]`` quoted the last)."""
    module = "vllm/v1/attention/backends/two.py"
    row = rows(
        analyze(one_checked_tree(tmp_path, "TWO_ATTN", module, "TwoBackend", TWO_REASONS)),
        "TWO_ATTN",
    )[0]
    assert row.accepts["head_sizes"] == [128]
    note = row.notes["Head Sizes"]
    assert "also accepts 64, 256" in note
    assert 'answers "head size 64 needs the small kernel"' in note
    assert "large kernel" not in note


NO_GPU = (
    """
from vllm.v1.attention.backend import AttentionBackend


class NoGpuBackend(AttentionBackend):
    @classmethod
    def supports_compute_capability(cls, capability):
        return capability.major >= 8
"""
    + COMBINATION_SIGNATURE
    + """\
        if device_capability.major < 20:
            return "the kernel is for GPUs not made yet"
        return None
"""
)


def test_a_check_refusing_every_gpu_it_reads_singles_out_nothing(tmp_path):
    """The check reads the GPU and refuses it on each: every GPU was tried, none
    passes, so every cell stays as the methods say, with why."""
    module = "vllm/v1/attention/backends/no_gpu.py"
    root = one_checked_tree(tmp_path, "NO_GPU_ATTN", module, "NoGpuBackend", NO_GPU)
    row = rows(analyze(root), "NO_GPU_ATTN")[0]
    unknown = row.accepts["unknown"]
    assert unknown["Compute Cap."] == (
        "the full check refuses every configuration tried: the kernel is for GPUs not made yet"
    )
    assert set(unknown.values()) == {unknown["Compute Cap."]}
    assert {k: v for k, v in row.accepts.items() if k != "unknown"} == row.supports
    assert not row.notes


def test_only_a_list_of_plain_values_is_narrowed_and_an_engine_config_is_named():
    from sphinxext_attn.runtime.accepts import _finite, _note
    from sphinxext_attn.runtime.full_check import Refusal

    assert _finite([64, 128]) and _finite([])
    assert not _finite("any")
    assert not _finite([64, {"min": 32, "multiple_of": 32}])
    assert not _finite(["16", "%16"])
    why = Refusal("needs FA4", None, ["x=1"], engine_config=True)
    note = _note("Head Sizes", [256], why, None)  # type: ignore[arg-type]
    assert note.endswith('answers "needs FA4" (assuming x=1, vLLM\'s default engine config)')
    plain = _note("Head Sizes", [256], Refusal("needs FA4", None), None)  # type: ignore[arg-type]
    assert plain.endswith('answers "needs FA4"')
