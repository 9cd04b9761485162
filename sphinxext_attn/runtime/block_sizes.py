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
from sphinxext_attn.vocab.names import CAPABILITIES

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


def per_gpu_labels(by_gpu: dict[tuple[int, int], list[str]], union: list[str]) -> list[str]:
    """Each size with the GPUs that take it, when not all of them do: ``64 (9.x)``."""
    out = []
    for label in union:
        caps = sorted(c for c, labels in by_gpu.items() if label in labels)
        out.append(label if len(caps) == len(by_gpu) else f"{label} ({_families(caps)})")
    return out


def _families(caps: list[tuple[int, int]]) -> str:
    """``9.x`` for every grid capability of a major, else each one."""
    parts: list[str] = []
    for major in sorted({c[0] for c in caps}):
        family = [c for c in CAPABILITIES if c[0] == major]
        picked = [c for c in caps if c[0] == major]
        parts += [f"{major}.x"] if picked == family else [f"{a}.{b}" for a, b in picked]
    return ", ".join(parts)
