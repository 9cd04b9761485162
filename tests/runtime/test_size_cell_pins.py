"""Size cells a sampled mutation run (seed 59) found unpinned, each test failing
with the mutant it was written for: block sizes that are not all sizes or
``MultipleOf``, a large ``MultipleOf`` alone, a rule no shorter than the sizes it
stands for, and head size remainders that are no union of multiples."""

from __future__ import annotations

import pytest
from runtime_trees import runtime_backend
from treebuilder import rows

from sphinxext_attn.analysis.pipeline import analyze

MULTIPLE_OF = "from vllm.v1.attention.backend import MultipleOf\n"
BLOCKS = """
@staticmethod
def get_supported_kernel_block_sizes():
    return {sizes}
"""


def _blocks(root, sizes: str, header: str = MULTIPLE_OF) -> object:
    runtime_backend(root, BLOCKS.format(sizes=sizes), header=header)
    return rows(analyze(root), "MY_ATTN")[0]


def test_an_object_with_no_fields_is_not_a_block_size(tmp_path):
    """Only an object whose one field is ``base`` (``MultipleOf``) is a step; one with
    no field is no size (``== {"base"}`` -> ``<=`` took it for a step and looked its
    ``base`` up)."""
    row = _blocks(tmp_path, "[16, Empty()]", header="class Empty:\n    pass\n")
    assert row.unknown == {
        "Block Sizes": "get_supported_kernel_block_sizes() is not a list of sizes"
    }
    assert "block_sizes" not in row.supports


@pytest.mark.parametrize(
    ("sizes", "kept"),
    [
        ("[MultipleOf(1024)]", ["%1024"]),
        ("[2048, MultipleOf(1024), 512]", ["512", "%1024"]),
    ],
)
def test_a_large_step_is_kept_beside_itself(tmp_path, sizes, kept):
    """A ``%N`` is left out only for a smaller step that divides it, never for
    itself (``> s`` -> ``is not s`` compared the two ints by identity, and
    1024 parsed twice is two objects: the step was dropped)."""
    assert _blocks(tmp_path, sizes).supports["block_sizes"] == kept


CHECK = "@classmethod\ndef supports_head_size(cls, head_size):\n    return {}\n"
HEADS = "@classmethod\ndef get_supported_head_sizes(cls):\n    return {sizes}\n"


def test_a_rule_no_shorter_than_its_sizes_is_not_used(tmp_path):
    """The list is longer than a cell: runs are written as rules where that saves
    characters; ``%16, 32-64`` is as long as ``32, 48, 64``, so those stay sizes
    (``saved > 0`` -> ``>= 0`` wrote the rule)."""
    sizes = [32, 48, 64, 120, 128, 136, 144, 192, 216, 272]
    runtime_backend(tmp_path, HEADS.format(sizes=sizes))
    row = rows(analyze(tmp_path), "MY_ATTN")[0]
    assert row.head_sizes == ("32, 48, 64 or %8, 120-144 or 192, 216, 272",)
    assert row.supports["head_sizes"] == sizes


def test_remainders_with_a_step_that_does_not_divide_the_modulus_are_unknown(tmp_path):
    """Remainders 0, 3, 6 of 8 are no union of multiples (3 does not divide 8:
    11 is a multiple of none of them): unknown (``mod % step == 0`` -> ``>= 0``
    said ``%3``)."""
    runtime_backend(tmp_path, CHECK.format("head_size % 8 in (0, 3, 6)"))
    row = rows(analyze(tmp_path), "MY_ATTN")[0]
    assert row.unknown == {
        "Head Sizes": "the accepted head sizes (remainders [0, 3, 6] of 8) are not bounds "
        "and multiples (vllm/v1/attention/backends/my_attn.py:9)"
    }
