"""Small helpers behind the runtime cells, at their edges: block sizes that are not
sizes (asked once, or per GPU), per-GPU block sizes with no supported GPU known,
declared KV cache dtypes that are empty or not strings, and a selection note with
no answer of the method to compare; head sizes the method raises for."""

from __future__ import annotations

import pytest
from evaluator import load
from runtime_trees import runtime_backend
from treebuilder import rows

from sphinxext_attn.analysis.pipeline import analyze
from sphinxext_attn.runtime.block_sizes import NOT_SIZES, block_facts, restrict_to_supported
from sphinxext_attn.runtime.class_answers import ClassAnswers
from sphinxext_attn.runtime.kv_dtypes import declared_dtypes, selection_note
from sphinxext_attn.runtime.questions import Answer


def test_a_block_size_answer_that_is_no_list_of_sizes_is_unknown():
    facts = ClassAnswers()
    block_facts(Answer("16"), "16", facts)
    assert facts.cells["Block Sizes"] is None and facts.unknown == {"Block Sizes": NOT_SIZES}
    caps = [(8, 0), (9, 0)]
    per_gpu = ClassAnswers()
    answer = Answer([[16], [16, "x"]], by_capability=True, capabilities=caps)
    block_facts(answer, answer.value, per_gpu)
    assert per_gpu.cells["Block Sizes"] is None
    assert per_gpu.unknown == {"Block Sizes": NOT_SIZES} and per_gpu.blocks_by_gpu is None


def test_block_sizes_by_gpu_with_no_supported_gpu_known_keep_every_gpu():
    facts = ClassAnswers(cells={"Compute Cap.": None})
    facts.blocks_by_gpu = {(8, 0): ["16"], (9, 0): ["64"]}
    restrict_to_supported(facts)
    assert facts.cells["Block Sizes"] == ["16", "64"]
    assert facts.blocks_by_gpu == {(8, 0): ["16"], (9, 0): ["64"]}
    alike = ClassAnswers(cells={"Compute Cap.": [(9, 0)]})
    alike.blocks_by_gpu = {(8, 0): ["16"], (9, 0): ["64"]}
    restrict_to_supported(alike)
    assert alike.cells["Block Sizes"] == ["64"] and alike.blocks_by_gpu is None


@pytest.mark.parametrize("value", ["[]", "[1, 'auto']", "'auto'"])
def test_declared_kv_dtypes_must_be_a_list_of_texts(tmp_path, value):
    it, cls = load(tmp_path, f"supported_kv_cache_dtypes = {value}\n")
    assert declared_dtypes(it, cls) is None


def test_declared_kv_dtypes_name_their_line(tmp_path):
    it, cls = load(tmp_path, 'supported_kv_cache_dtypes = ["auto", "fp8", "auto"]\n')
    declared = declared_dtypes(it, cls)
    assert declared is not None and declared.dtypes == ("auto", "fp8")
    assert declared.where is not None and declared.where.path.endswith("my_attn.py")


def test_no_answer_of_the_method_is_no_note():
    assert selection_note(("auto",), None) == ""
    assert selection_note(("auto",), ["auto"]) == ""
    assert selection_note(("auto",), ["auto", "fp8"], by_gpu=True) == (
        "supports_kv_cache_dtype(), which vLLM's selection asks, also accepts fp8 (on some GPUs)"
    )
    head = "supports_kv_cache_dtype(), which vLLM's selection asks,"
    assert selection_note(("auto",), ["auto", "fp8"]) == f"{head} also accepts fp8"
    assert selection_note(("auto", "fp8"), ["auto"], by_gpu=True) == (
        f"{head} does not accept fp8"
    )


def test_head_sizes_the_method_raises_for_are_not_accepted(tmp_path):
    """vLLM, asking a size the method raises for, would fail: not accepted, and the
    cell is not unknown for it."""
    body = (
        "@classmethod\ndef supports_head_size(cls, head_size):\n"
        "    if head_size > 256:\n        raise ValueError('too big')\n"
        "    return head_size % 64 == 0\n"
    )
    runtime_backend(tmp_path, body)
    row = rows(analyze(tmp_path), "MY_ATTN")[0]
    assert row.head_sizes == ("64", "128", "192", "256")
    assert row.supports["head_sizes"] == [64, 128, 192, 256]
    assert "Head Sizes" not in row.unknown
