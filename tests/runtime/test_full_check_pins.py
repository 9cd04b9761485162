"""vLLM's full check (runtime/full_check.py) left out where a configuration cannot
be built from the class's own answers: a flag column the check reads is unknown,
or the class supports no GPU. The cells then stay as the methods say. And where
a refusal built of two parts of equal length is said to be written, and that a
check taking the attention type is asked for the decoder alone."""

from __future__ import annotations

import pytest
from accepts_trees import COMBINATION_SIGNATURE, checked_interface, one_checked_tree
from runtime_trees import BACKEND_INTERFACE
from treebuilder import rows

from sphinxext_attn.analysis.pipeline import analyze

HEAD = """
from vllm.v1.attention.backend import AttentionBackend


class EdgeBackend(AttentionBackend):
    @classmethod
    def get_supported_head_sizes(cls):
        return [128, 256]
"""

REFUSES_256 = (
    COMBINATION_SIGNATURE
    + """\
        if head_size == 256:
            return "head size 256 needs the large kernel"
        return None
"""
)


def _row(tmp_path, body: str):
    module = "vllm/v1/attention/backends/edge.py"
    root = one_checked_tree(tmp_path, "EDGE_ATTN", module, "EdgeBackend", HEAD + body)
    return rows(analyze(root), "EDGE_ATTN")[0]


@pytest.mark.parametrize(
    ("body", "column"),
    [
        ("def supports_sink(cls):\n        return cls.no_such_member\n", "Sink"),
        (
            "def get_supported_kernel_block_sizes(cls):\n        return cls.no_such_member\n",
            "Block Sizes",
        ),
    ],
    ids=["flag", "block-sizes"],
)
def test_an_unknown_column_leaves_the_check_unasked(tmp_path, body, column):
    """``has_sink`` may be set only where the Sink column says so, and the block sizes
    tried are the column's: either unknown, no configuration is built, so 256 stays,
    without a note (building one anyway refused 256, or failed)."""
    row = _row(tmp_path, "\n    @classmethod\n    " + body + REFUSES_256)
    assert "AttributeError" in row.unknown[column]
    assert row.supports["head_sizes"] == [128, 256]
    assert row.accepts == row.supports
    assert "Head Sizes" not in row.notes


def test_a_class_supporting_no_dtype_leaves_the_check_unasked(tmp_path):
    no_dtype = "\n    @classmethod\n    def supports_dtype(cls, dtype):\n        return False\n"
    row = _row(tmp_path, no_dtype + REFUSES_256)
    assert row.dtypes == ()
    assert row.accepts == row.supports
    assert "Head Sizes" not in row.notes


SINKS = (
    """
    @classmethod
    def supports_sink(cls):
        return True
"""
    + COMBINATION_SIGNATURE
    + """\
        if head_size == 256 and not has_sink:
            return "head size 256 needs sinks"
        return None
"""
)


def test_a_flag_the_class_allows_is_tried_both_ways(tmp_path):
    """The class supports sinks, so ``has_sink`` is tried set as well as unset: 256,
    refused without sinks, passes with them and is kept."""
    row = _row(tmp_path, SINKS)
    assert row.supports_sink is True
    assert row.accepts["head_sizes"] == [128, 256]
    assert "Head Sizes" not in row.notes


def test_a_class_supporting_no_gpu_leaves_the_check_unasked(tmp_path):
    """No GPU in the Compute Cap. cell: no configuration to ask, the other cells as
    the methods say."""
    no_gpu = (
        "\n    @classmethod\n    def supports_compute_capability(cls, capability):\n"
        "        return False\n"
    )
    row = _row(tmp_path, no_gpu + REFUSES_256)
    assert row.supports["compute_capabilities"] == []
    assert row.accepts == row.supports
    assert "Head Sizes" not in row.notes


PARTS = (
    """
from vllm.v1.attention.backend import AttentionBackend


def _what():
    return "head size"


def _why():
    return "too large"


class PartsBackend(AttentionBackend):
    @classmethod
    def get_supported_head_sizes(cls):
        return [128, 256]
"""
    + COMBINATION_SIGNATURE
    + """\
        if head_size == 256:
            return f"{_what()} {_why()}"
        return None
"""
)


def test_a_reason_of_two_equal_literal_parts_is_placed_at_the_first(tmp_path):
    """ "head size" and "too large" are literals of the same length, both in the
    reason (the f-string that joins them is not a literal): the first is named."""
    module = "vllm/v1/attention/backends/parts.py"
    root = one_checked_tree(tmp_path, "PARTS_ATTN", module, "PartsBackend", PARTS)
    row = rows(analyze(root), "PARTS_ATTN")[0]
    assert row.accepts["head_sizes"] == [128]
    assert row.notes["Head Sizes"].endswith(
        'answers "head size too large" (vllm/v1/attention/backends/parts.py:5)'
    )


KINDS = """
from vllm.v1.attention.backend import AttentionBackend, AttentionType


class KindBackend(AttentionBackend):
    @classmethod
    def get_supported_head_sizes(cls):
        return [128, 256]

    @classmethod
    def supports_attn_type(cls, attn_type):
        return True

    @classmethod
    def supports_combination(
        cls, head_size, dtype, kv_cache_dtype, block_size, use_mla, has_sink,
        use_sparse, use_mm_prefix, device_capability, attn_type,
    ):
        if head_size == 256 and attn_type == AttentionType.DECODER:
            return "256 only for encoders"
        return None
"""


def test_a_check_taking_the_attention_type_is_asked_for_the_decoder_alone(tmp_path):
    """The class takes every attention type, but the tables are the decoder's: 256,
    refused for the decoder, is left out though an encoder would pass it."""
    module = "vllm/v1/attention/backends/kinds.py"
    root = one_checked_tree(tmp_path, "KIND_ATTN", module, "KindBackend", KINDS)
    interface = checked_interface().replace(
        "use_mm_prefix, device_capability,\n    ):\n        return None",
        "use_mm_prefix, device_capability, attn_type=None,\n    ):\n        return None",
    )
    assert "attn_type=None" in interface
    (root / BACKEND_INTERFACE).write_text(interface, encoding="utf-8")
    row = rows(analyze(root), "KIND_ATTN")[0]
    assert row.supports["head_sizes"] == [128, 256]
    assert row.accepts["head_sizes"] == [128]
    assert 'answers "256 only for encoders"' in row.notes["Head Sizes"]
