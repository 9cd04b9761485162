"""Comparisons in runtime/cell_text.py a mutation run left loose: ``"any"`` is
told by equality (not identity), a list of sizes is all sizes whatever its
length, a short list is written as it is, and the rule that saves the most wins."""

from __future__ import annotations

from sphinxext_attn.runtime.cell_text import first_head_size, head_size_text, per_gpu_labels


def test_any_is_told_by_equality_not_identity():
    """A string equal to ``"any"`` but not the interned literal still means any."""
    built = "".join(["an", "y"])
    assert head_size_text(built) == ()
    assert first_head_size(built) is None


def test_a_long_list_of_sizes_is_still_a_list_of_sizes():
    """300 sizes (a length past the small-int cache) are shortened as sizes."""
    assert head_size_text(list(range(8, 8 * 301, 8))) == ("%8, ≤2400",)


def test_a_list_short_enough_for_the_cell_is_written_as_it_is():
    """Eight multiples of 8 fit the cell: no rule, though ``%8, ≤64`` is shorter."""
    sizes = list(range(8, 72, 8))
    assert head_size_text(sizes) == tuple(str(s) for s in sizes)


def test_the_rule_saving_the_most_is_taken_first():
    """Multiples of 48 save more than later, smaller chains; the sizes left stay."""
    sizes = [32, 144, 192, 240, 272, 288, 384, 432, 448]
    assert head_size_text(sizes) == ("32 or %48, 144-288 or 272, 384, 432, 448",)


def test_a_size_every_gpu_takes_is_bare_however_many_gpus_are_asked():
    """300 GPUs (a count past the small-int cache) all taking 64: no GPU named."""
    by_gpu = {(major, 0): ["64"] for major in range(300)}
    assert per_gpu_labels(by_gpu, ["64"]) == ["64"]
