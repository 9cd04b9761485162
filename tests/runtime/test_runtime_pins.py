"""Runtime behaviours a sampled mutation run (seed 59) found unpinned, each test
failing with the mutant it was written for: a full check that refuses the first
GPUs but passes on a later one, its runs sharing the cells' memo, a question or a
look-up asked once when the GPU is not read (where asking again could see what
the first asking changed), a priority function with MLA paths only, an
unannotated ``device_capability`` parameter, the majors that are GPUs and a head
size chain whose step is a gap but not the smallest size.

The equivalent mutants of this sample are argued in ``test_runtime_edges.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from accepts_trees import COMBINATION_SIGNATURE, one_checked_tree
from runtime_trees import runtime_backend, runtime_tree
from treebuilder import CUDA, dedent, rows

from sphinxext_attn.analysis.pipeline import analyze
from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.pyeval.values import NODE
from sphinxext_attn.runtime.priority_titles import evaluated_priorities
from sphinxext_attn.runtime.questions import Asker
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.vocab.names import CAPABILITIES

LATER = (
    """
from vllm.v1.attention.backend import AttentionBackend


class LaterBackend(AttentionBackend):
    @classmethod
    def supports_compute_capability(cls, capability):
        return capability.major >= 8
"""
    + COMBINATION_SIGNATURE
    + """\
        if device_capability.major < 10:
            return "the kernel needs Blackwell"
        return None
"""
)


def test_a_check_refusing_the_first_gpus_is_asked_on_the_later_ones(tmp_path):
    """8.0 is refused whatever else is tried, but the check read the GPU: the next
    GPUs are tried, 10.0 passes, and the cell keeps 10.0 and after (``read_gpu or``
    -> ``and`` never noted the read and refused every configuration at 8.0)."""
    module = "vllm/v1/attention/backends/later.py"
    root = one_checked_tree(tmp_path, "LATER_ATTN", module, "LaterBackend", LATER)
    row = rows(analyze(root), "LATER_ATTN")[0]
    assert "unknown" not in row.accepts
    assert row.compute_capability == "≥10.0"
    assert row.accepts["compute_capabilities"] == ["10.0", "10.3", "11.0", "12.0", "12.1"]
    assert "also accepts 8.0, 8.6, 8.7, 8.9, 9.0" in row.notes["Compute Cap."]
    assert 'answers "the kernel needs Blackwell"' in row.notes["Compute Cap."]


#: iterations of each loop: one loop fits a question's step budget, two do not
LOOP = 12_000
HEAVY = """
from vllm.v1.attention.backend import AttentionBackend


def _sizes():
    total = 0
    for i in range({loop}):
        total += i
    return [128, 256]


class HeavyBackend(AttentionBackend):
    @classmethod
    def get_supported_head_sizes(cls):
        return _sizes()
"""
HEAVY_CHECK = """\
        if head_size == 256:
            return "head size 256 is refused"
        {call}
        total = 0
        for i in range({loop}):
            total += i
        return None
"""


def _heavy(root: Path, call: str, loop: int) -> dict[str, object]:
    source = (
        HEAVY.format(loop=LOOP) + COMBINATION_SIGNATURE + HEAVY_CHECK.format(call=call, loop=loop)
    )
    module = "vllm/v1/attention/backends/heavy.py"
    tree = one_checked_tree(root, "HEAVY_ATTN", module, "HeavyBackend", source)
    return rows(analyze(tree), "HEAVY_ATTN")[0].accepts


def test_the_full_check_reuses_what_the_cells_computed(tmp_path):
    """The check calls the helper the head sizes came from: its answer is
    remembered from the cells, so the check's runs afford their own loop and 256
    is left out (``record=False`` -> ``True`` ran each with fresh memos and ran
    out of steps). The same work in the check's own body does run out."""
    accepts = _heavy(tmp_path / "shared", "_sizes()", LOOP)
    assert accepts["head_sizes"] == [128] and "unknown" not in accepts
    alone = _heavy(tmp_path / "alone", "pass", 2 * LOOP)
    assert alone["head_sizes"] == [128, 256]
    assert alone["unknown"]["Head Sizes"].startswith(  # type: ignore[index]
        "the full check not evaluated: step budget exhausted"
    )


def _asker(root: Path, body: str, header: str, extra: dict[str, str | bytes | None]) -> Asker:
    runtime_backend(root, body, header=header, extra=extra)
    it = Interpreter(SourceTree(root), Machine())
    cls = it.module_attr(it.module("vllm.v1.attention.backends.my_attn"), "MyBackend", NODE)
    return Asker(it, cls)


ONCE = """
_COUNT = 0


def _once():
    global _COUNT
    _COUNT += 1
    if _COUNT == 1:
        return not_defined_anywhere()
    return True
"""


def test_an_unknown_that_read_no_gpu_is_the_answer(tmp_path):
    """The first asking is unknown without reading the GPU: that is the answer,
    not asked again per GPU (``last_read & CAPABILITY`` -> ``|`` asked on every
    GPU, where the global the first asking set made the helper answer True)."""
    body = "@classmethod\ndef supports_sink(cls):\n    return _once()\n"
    answer = _asker(tmp_path, body, ONCE, {}).ask("supports_sink")
    assert str(answer.unknown) == (
        "name not_defined_anywhere is not defined (vllm/v1/attention/backends/my_attn.py:12)"
    )
    assert not answer.by_capability and answer.value is None and answer.capabilities == []


PICKS = "vllm/v1/attention/ops/picks.py"
PICK = """
_COUNT = 0


def _accepts_all(kv_cache_dtype):
    return True


def pick():
    global _COUNT
    _COUNT += 1
    if _COUNT == 1:
        raise ValueError("picked too early")
    return _accepts_all
"""


def test_a_look_up_that_raises_without_reading_the_gpu_is_not_tried_per_gpu(tmp_path):
    """The member is looked up once with no GPU; it raised and read no GPU, so the
    raise is the answer (``break`` -> ``continue`` looked it up on every GPU, and
    the second look-up, after the helper's global changed, found it). Asked again,
    the look-up runs again and finds it."""
    header = "from vllm.v1.attention.ops.picks import pick\n"
    asker = _asker(tmp_path, "supports_kv_cache_dtype = pick()\n", header, {PICKS: dedent(PICK)})
    missing = asker.has("supports_kv_cache_dtype")
    assert missing is not None and missing.raised == "ValueError: picked too early"
    assert asker.has("supports_kv_cache_dtype") is None


MLA_ONLY = """
from vllm.v1.attention.backends.registry import AttentionBackendEnum as E


def _get_backend_priorities(use_mla="always"):
    if use_mla == "always":
        return [E.TRITON_MLA]
    return [E.FLASH_ATTN]
"""


def test_a_priority_function_with_mla_paths_only_lists_them(tmp_path):
    """``use_mla`` has one value (its default), true: every path is MLA, none
    standard, and the MLA list is still given (``continue`` -> ``break`` stopped at
    the empty standard category)."""
    root = runtime_tree(tmp_path, {CUDA: dedent(MLA_ONLY)})
    found = evaluated_priorities(Interpreter(SourceTree(root), Machine()))
    assert [(p.category, p.arch, p.backends, p.source.line) for p in found] == [
        ("mla", "default", ("TRITON_MLA",), 6)
    ]


def test_an_unannotated_device_capability_is_tried_on_every_gpu(tmp_path):
    """The test tree's ``_get_backend_priorities(use_mla, device_capability)`` has
    no annotations: the name alone makes the GPU parameter (``==`` -> ``<`` left it
    with no values, and the lists unevaluated)."""
    root = runtime_tree(tmp_path)
    found = evaluated_priorities(Interpreter(SourceTree(root), Machine()))
    assert [(p.category, p.arch, p.backends) for p in found] == [
        ("standard", "default", ("FLASH_ATTN", "FLASHINFER", "TRITON_ATTN")),
        ("standard", "sm100", ("FLASHINFER", "FLASH_ATTN", "TRITON_ATTN")),
        ("mla", "default", ("TRITON_MLA",)),
    ]
    assert found[1].capabilities == ("10.0", "10.3")
    assert len(found[2].capabilities) == len(CAPABILITIES)


CAP_CHECK = "@classmethod\ndef supports_compute_capability(cls, capability):\n    return {}\n"


@pytest.mark.parametrize(
    ("test", "shown"),
    [
        # major 20 is a GPU the code may name: asked, and the only one accepted
        ("capability.major >= 20", "≥20.0"),
        # major 4 is no GPU (a count): not asked, so every GPU of the grid passes
        ("capability.major > 4", "Any"),
    ],
)
def test_the_majors_of_gpus_run_from_5_to_20(tmp_path, test, shown):
    """``MAJORS = range(5, 21)``: ``range(5, 20)`` dropped 20.0 (the cell said
    None); ``range(4, 21)`` asked 4.0, refused, and said ``≥5.0``."""
    runtime_backend(tmp_path, CAP_CHECK.format(test))
    assert rows(analyze(tmp_path), "MY_ATTN")[0].compute_capability == shown


def test_head_sizes_stepping_by_a_gap_smaller_than_the_first_are_one_rule(tmp_path):
    """40 to 200 by 8: the step is the gap between sizes, not the smallest size
    (``b - a`` -> ``b >> a`` kept only 40 as a step and listed most sizes)."""
    sizes = list(range(40, 208, 8))
    runtime_backend(
        tmp_path, f"@classmethod\ndef get_supported_head_sizes(cls):\n    return {sizes}\n"
    )
    row = rows(analyze(tmp_path), "MY_ATTN")[0]
    assert row.head_sizes == ("%8, 40-200",)
    assert row.supports["head_sizes"] == sizes
