"""The text of evaluated cells (runtime/cell_text.py) where the edge tests left it
loose: compute capabilities that are neither every GPU from one on nor whole
families, a list of head sizes whose first item is a rule, sizes that only some
GPUs take, a chain of multiples of an odd step that ends the set."""

from __future__ import annotations

from sphinxext_attn.runtime.cell_text import (
    _chains,
    capability_text,
    head_size_text,
    per_gpu_labels,
    size_rule,
)
from sphinxext_attn.vocab.names import CAPABILITIES


def test_a_family_is_named_only_when_each_of_its_gpus_is_accepted():
    """9.0 is the whole Hopper family of the grid (``9.x``); 8.0 alone of Ampere,
    and 10.0 without 10.3, are each named."""
    assert capability_text([(8, 0), (9, 0)]) == "8.0, 9.x"
    assert capability_text([(8, 0), (8, 6), (10, 0)]) == "8.0, 8.6, 10.0"


def test_a_rule_listed_before_sizes_is_one_union_with_them():
    """A rule first, then a size: the whole union is written (smallest first), not
    the first rule alone."""
    assert head_size_text([size_rule(256, None, 128), 64]) == ("64 or %128, ≥256",)


def test_a_size_only_some_gpus_take_names_them():
    """64 on every GPU asked reads as it is; 128 only on Hopper names the family."""
    by_gpu = {(9, 0): ["64", "128"], (10, 0): ["64"]}
    assert per_gpu_labels(by_gpu, ["64", "128"]) == ["64", "128 (9.x)"]
    # the first GPU of a family alone is that GPU, not the family
    assert per_gpu_labels({(8, 0): ["64"], (9, 0): []}, ["64"]) == ["64 (8.0)"]
    by_major = {(8, 0): ["64"], (9, 0): ["64"], (10, 0): []}
    assert per_gpu_labels(by_major, ["64"]) == ["64 (8.0, 9.x)"]


def test_every_gpu_from_one_on_reads_as_at_least_it():
    assert capability_text([c for c in CAPABILITIES if c >= (8, 0)]) == "≥8.0"
    assert capability_text([(8, 6), (8, 9)], [(8, 0), (8, 6), (8, 9)]) == "≥8.6"


def test_a_chain_ending_at_the_largest_size_is_kept_for_an_odd_step():
    """3, 6, 9, 12: the walk goes one step past 12 (to 15) to close the run."""
    assert _chains({3, 6, 9, 12}) == [({"min": None, "max": 12, "multiple_of": 3}, {3, 6, 9, 12})]


def test_a_chain_may_step_by_two():
    assert _chains({2, 4, 6}) == [({"min": None, "max": 6, "multiple_of": 2}, {2, 4, 6})]
