"""The Block Sizes cell: the kernel block sizes, exact per GPU where the class picks by GPU.

``get_supported_kernel_block_sizes()`` names no GPU, but a class may answer by
the device (``64 if is_device_capability_family(90) else 128``). It is then
asked on every capability of the grid. Only the GPUs the backend supports
count (its Compute Cap. answer): where they all get the same sizes, that is the
cell; where they differ, each size is shown with the GPUs that take it
(``64 (9.x), 128 (10.x)``) and the JSON gives the sizes per capability.
"""

from __future__ import annotations

from typing import Any

from sphinxext_attn.runtime.class_answers import ClassAnswers
from sphinxext_attn.runtime.questions import Answer, block_size_labels, sorted_block_labels

NOT_SIZES = "get_supported_kernel_block_sizes() is not a list of sizes"


def block_facts(answer: Answer, value: Any, facts: ClassAnswers) -> None:
    """The Block Sizes cell (sorted labels) and, when the class answers by GPU,
    ``facts.blocks_by_gpu`` (capability -> labels); an unknown when the answer
    is not a list of sizes."""
    facts.cells["Block Sizes"] = None
    if value is None:
        return
    if not answer.by_capability:
        labels = block_size_labels(value)
        if labels is None:
            facts.unknown["Block Sizes"] = NOT_SIZES
            return
        facts.cells["Block Sizes"] = sorted_block_labels(labels)
        return
    by_gpu: dict[tuple[int, int], list[str]] = {}
    for cap, one in zip(answer.capabilities, value, strict=True):
        labels = block_size_labels(one)
        if labels is None:
            facts.unknown["Block Sizes"] = NOT_SIZES
            return
        by_gpu[cap] = sorted_block_labels(labels)
    facts.blocks_by_gpu = by_gpu
    facts.cells["Block Sizes"] = sorted_block_labels([x for ls in by_gpu.values() for x in ls])


def restrict_to_supported(facts: ClassAnswers) -> None:
    """Keep the per-GPU block sizes of the GPUs the backend supports; when those
    all agree, the cell is their one answer."""
    by_gpu, facts.blocks_by_gpu = facts.blocks_by_gpu, None
    if not by_gpu:
        return
    supported = facts.cells.get("Compute Cap.")
    if supported:
        by_gpu = {c: v for c, v in by_gpu.items() if c in set(map(tuple, supported))} or by_gpu
    union = sorted_block_labels([x for ls in by_gpu.values() for x in ls])
    facts.cells["Block Sizes"] = union
    if len({tuple(v) for v in by_gpu.values()}) > 1:
        facts.blocks_by_gpu = by_gpu
