"""The runtime profile's cells that depend on the GPU or on what a check accepts:
a method or block size the class picks per GPU, KV dtypes as the declared list with
a note on the check, and compute capabilities exact over what the code tells apart."""

from __future__ import annotations

from typing import Any

import pytest
from runtime_trees import FILE, only, runtime_backend

from sphinxext_attn.analysis.pipeline import analyze

GPU_CHOSEN_METHOD = """
if current_platform.is_device_capability_family(100):

    @classmethod
    def supports_head_size(cls, head_size):
        return head_size in (64, 256)

else:

    @classmethod
    def supports_head_size(cls, head_size):
        return head_size == 128
"""


def test_a_method_the_class_body_picks_by_gpu_is_looked_up_per_gpu(tmp_path):
    """The method looked up for a grid is reused only when finding it read no GPU."""
    header = "from vllm.platforms import current_platform\n"
    runtime_backend(tmp_path, GPU_CHOSEN_METHOD, header=header)
    row = only(analyze(tmp_path), "MY_ATTN")
    assert row.unknown == {}
    assert row.supports["head_sizes"] == [64, 128, 256]


UNDECLARED = """
supported_kv_cache_dtypes = ["auto", "bfloat16"]

@classmethod
def supports_kv_cache_dtype(cls, kv_cache_dtype):
    return kv_cache_dtype is None or kv_cache_dtype.startswith(("auto", "bfloat16", "fp8"))
"""


def test_kv_dtypes_are_the_declared_list_with_a_note_on_the_check(tmp_path):
    """A check that accepts dtypes the class does not declare: the cell is the declared
    list (what vLLM names as the backend's KV dtypes), the note names the rest, and the
    JSON carries the note."""
    from sphinxext_attn.render.jsonout import to_data

    runtime_backend(tmp_path, UNDECLARED)
    analysis = analyze(tmp_path)
    row = only(analysis, "MY_ATTN")
    assert row.kv_cache_dtypes == ("auto", "bfloat16")
    assert row.notes["KV Dtypes"].endswith("also accepts fp8, fp8_e4m3, fp8_e5m2")
    assert row.sources["KV Dtypes"].path == FILE  # the line that declares the list
    (data,) = [b for b in to_data(analysis)["backends"] if b["name"] == "MY_ATTN"]
    assert data["notes"] == dict(row.notes)
    # the same list and check: no note
    same = UNDECLARED.replace('"bfloat16"]', '"bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2"]')
    runtime_backend(tmp_path, same)
    assert only(analyze(tmp_path), "MY_ATTN").notes == {}


COMPUTED_KV = """
supported_kv_cache_dtypes = torch.get_kv_dtypes()

@classmethod
def supports_kv_cache_dtype(cls, kv_cache_dtype):
    return kv_cache_dtype in ("auto", "fp8")
"""


def test_a_list_that_cannot_be_read_leaves_the_checks_answer(tmp_path):
    runtime_backend(tmp_path, COMPUTED_KV, header="import torch\n")
    row = only(analyze(tmp_path), "MY_ATTN")
    assert row.kv_cache_dtypes == ("auto", "fp8") and row.notes == {}


BLOCKS_BY_GPU = """
@staticmethod
def get_supported_kernel_block_sizes():
    return [64 if current_platform.is_device_capability_family(90) else 128]

@classmethod
def supports_compute_capability(cls, capability):
    return capability.major in (9, 10)
"""


def test_block_sizes_the_class_picks_by_gpu_are_given_per_gpu(tmp_path):
    """Each size with the GPUs (of those the backend supports) that take it; the JSON
    gives the union and the sizes per capability."""
    header = "from vllm.platforms import current_platform\n"
    runtime_backend(tmp_path, BLOCKS_BY_GPU, header=header)
    row = only(analyze(tmp_path), "MY_ATTN")
    assert row.cell("Block Sizes") == "64 (9.x), 128 (10.x)"
    assert row.supports["block_sizes"] == ["64", "128"]
    assert row.supports["block_sizes_by_capability"] == {
        "9.0": ["64"],
        "10.0": ["128"],
        "10.3": ["128"],
    }
    # supported on 10.x only: one answer, no GPU named
    runtime_backend(tmp_path, BLOCKS_BY_GPU.replace("(9, 10)", "(10,)"), header=header)
    row = only(analyze(tmp_path), "MY_ATTN")
    assert row.cell("Block Sizes") == "128"
    assert "block_sizes_by_capability" not in row.supports


@pytest.mark.parametrize(
    ("header", "check", "cell", "listed"),
    [
        # major == 12: 13.0 is told apart (the next major), and refused
        ("", "capability.major == 12", "12.x", ["12.0", "12.1"]),
        # from 8.0 on, later majors included
        ("", "capability.major >= 8", "≥8.0", None),
        # a pair off the grid in a module constant the check reads
        (
            "_CAPS = ((10, 0), (10, 7))\n",
            "(capability.major, capability.minor) in _CAPS",
            "10.0, 10.7",
            ["10.0"],
        ),
        # the capability as an int, compared with one off the grid
        ("", "capability.to_int() >= 60 and capability.to_int() < 75", "6.x, 7.0", ["7.0"]),
    ],
)
def test_compute_capability_is_exact_over_what_the_code_tells_apart(
    tmp_path, header, check, cell, listed
):
    """The check is also asked on the capabilities its code names (and the next
    major): the cell is exact over them; the JSON keeps the contract's grid."""
    body = f"@classmethod\ndef supports_compute_capability(cls, capability):\n    return {check}\n"
    runtime_backend(tmp_path, body, header=header)
    row = only(analyze(tmp_path), "MY_ATTN")
    assert row.unknown == {}
    assert row.compute_capability == cell
    if listed is not None:
        assert row.supports["compute_capabilities"] == listed


def test_each_capability_is_asked_once_and_an_unknown_one_again(tmp_path, monkeypatch):
    """The runs that read which capabilities the check names answer for the grid: the
    cell asks the check only on the points off it (10.7, which it names; the next
    major, 11.0, is on the grid). A grid point those runs could not answer is asked
    again, and its reason is the cell's."""
    from sphinxext_attn.runtime.questions import Asker
    from sphinxext_attn.vocab.names import CAPABILITIES

    asked: list[tuple[int, int] | None] = []
    call = Asker.call

    def counted(self: Asker, name: str, *args: Any, capability: Any = None) -> Any:
        if name == "supports_compute_capability" and self.cls.name == "MyBackend":
            asked.append(capability)
        return call(self, name, *args, capability=capability)

    monkeypatch.setattr(Asker, "call", counted)
    check = "capability.major == 10 and capability != DeviceCapability(10, 7)"
    body = f"@classmethod\ndef supports_compute_capability(cls, capability):\n    return {check}\n"
    runtime_backend(tmp_path, body)
    row = only(analyze(tmp_path), "MY_ATTN")
    assert row.supports["compute_capabilities"] == ["10.0", "10.3"]
    assert sorted(asked) == sorted([*CAPABILITIES, (10, 7)])
    # unknown on 8.0 only (a call out of the tree): asked there twice, the cell unknown
    asked.clear()
    check = "torch.cuda.is_available() if capability == DeviceCapability(8, 0) else True"
    body = f"@classmethod\ndef supports_compute_capability(cls, capability):\n    return {check}\n"
    runtime_backend(tmp_path, body)
    row = only(analyze(tmp_path), "MY_ATTN")
    assert "Compute Cap." in row.unknown
    assert "torch.cuda.is_available" in row.unknown["Compute Cap."]
    assert asked.count((8, 0)) == 2
