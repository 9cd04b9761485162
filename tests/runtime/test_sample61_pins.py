"""Runtime behaviours a sampled mutation run (seed 61) found unpinned, each test
failing with the mutant it was written for.

Mutants argued equivalent (no input tells them from the product):
- cell_text.capability_text ``c[0] == major`` -> ``c[0] is major``: both are majors of
  capability points (the grid's 7 to 12, named ones within ``MAJORS``, 5 to 20), and
  CPython keeps one object for each int from -5 to 256 however it is made (a literal,
  arithmetic, ``int()``, JSON), so equal majors are the same object.
- head_sizes.head_size_answer ``not ask.last_read & CAPABILITY`` -> ``/ CAPABILITY``:
  ``CAPABILITY`` is 1, so the mutant tests "read anything", as ``*`` does (argued in
  test_runtime_edges.py): it asks again per GPU only after an unknown whose path read
  a fact but not the GPU, and meets the same unknown on the first GPU.
"""

from __future__ import annotations

from accepts_trees import COMBINATION_SIGNATURE, one_checked_tree
from runtime_trees import runtime_backend
from treebuilder import DEMO_TREE, rows

from sphinxext_attn.analysis.pipeline import analyze
from sphinxext_attn.runtime.merge import evaluate_runtime
from sphinxext_attn.source.tree import SourceTree

NO_NONE_BLOCK = (
    """
from vllm.v1.attention.backend import AttentionBackend


class SmallBlockBackend(AttentionBackend):
    @staticmethod
    def get_supported_kernel_block_sizes():
        return [16, 32, 64]
"""
    + COMBINATION_SIGNATURE
    + """\
        if block_size is None or block_size > 32:
            return "the kernel needs a block size of at most 32"
        return None
"""
)


def test_no_block_size_given_is_never_a_refused_value(tmp_path):
    """The check refuses a configuration without a block size (the seed), so every
    value is asked, but only the sizes the cell lists are candidates: ``None`` is
    vLLM's "not given", not a size (``v is not None and ...`` -> ``or`` asked it too
    and listed it as refused)."""
    module = "vllm/v1/attention/backends/small_block.py"
    root = one_checked_tree(tmp_path, "SMALL_ATTN", module, "SmallBlockBackend", NO_NONE_BLOCK)
    row = rows(analyze(root), "SMALL_ATTN")[0]
    assert row.supports["block_sizes"] == ["16", "32", "64"]
    assert row.accepts["block_sizes"] == ["16", "32"]
    note = row.notes["Block Sizes"]
    assert "also accepts 64, which" in note and "None" not in note


CHECK = "@classmethod\ndef supports_head_size(cls, head_size):\n    return {}\n"


def test_a_long_run_of_two_steps_is_written_as_rules(tmp_path):
    """Up to 96, remainders 0, 2, 3, 4 of 6 (multiples of 2 or 3): 64 sizes, more
    than are listed one by one, so two rules (``len(members) > MAX_LISTED`` ->
    ``is MAX_LISTED`` stopped at 32 and listed those, dropping the larger sizes)."""
    runtime_backend(
        tmp_path, CHECK.format("1 <= head_size <= 96 and head_size % 6 in (0, 2, 3, 4)")
    )
    row = rows(analyze(tmp_path), "MY_ATTN")[0]
    assert row.supports["head_sizes"] == [
        {"min": None, "max": 96, "multiple_of": 2},
        {"min": None, "max": 96, "multiple_of": 3},
    ]


def test_the_runtime_answers_say_where_by_default():
    """``evaluate_runtime`` and the reader give each cell's deciding lines unless
    told not to (default ``provenance=True`` -> ``False`` gave none)."""
    answers = evaluate_runtime(SourceTree(DEMO_TREE))
    assert any(facts.sources for _, _, facts in answers.backends)


def test_a_literal_pair_with_minor_zero_is_a_capability():
    """``(13, 0)`` in a check names 13.0, a GPU off the grid, as ``(13, 9)`` names
    13.9; a minor of 10 is no capability (``0 <= ints[1]`` -> ``1 <=`` dropped every
    ``X.0`` a check names only as a literal pair)."""
    import ast

    from sphinxext_attn.runtime.capability_points import _pair

    def found(text: str) -> set[tuple[int, int]]:
        return _pair(ast.parse(text, mode="eval").body)

    assert found("(13, 0)") == {(13, 0)}
    assert found("(13, 9)") == {(13, 9)}
    assert found("(13, 10)") == set()


def test_the_later_gpus_of_a_family_are_named_not_the_family():
    """8.6 and 8.9 but not 8.0: two of a family are each named (``picked ==
    family`` -> ``>=`` compared the lists in order, and ``(8, 6)`` sorts after
    ``(8, 0)``: "8.x")."""
    from sphinxext_attn.runtime.cell_text import per_gpu_labels

    by_gpu = {(8, 0): [], (8, 6): ["64"], (8, 9): ["64"]}
    assert per_gpu_labels(by_gpu, ["64"]) == ["64 (8.6, 8.9)"]
