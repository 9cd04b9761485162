"""Provenance of evaluated cells: each links to the line that decides it, also in a
base class in another file."""

from __future__ import annotations

import ast

from runtime_trees import runtime_backend
from treebuilder import dedent, rows

from sphinxext_attn.analysis.pipeline import analyze
from sphinxext_attn.model.records import Location

BASE_FILE = "vllm/v1/attention/backends/my_base.py"
BASE = """
from vllm.v1.attention.backend import AttentionBackend


class MyBase(AttentionBackend):
    @classmethod
    def get_supported_head_sizes(cls):
        return [64, 128]

    @classmethod
    def supports_compute_capability(cls, capability):
        return capability.major >= 9
"""

BODY = """
@classmethod
def supports_sink(cls):
    if cls.get_supported_head_sizes():
        return True
    return False
"""


def test_cells_link_to_the_deciding_line_across_files(tmp_path):
    header = "from vllm.v1.attention.backends.my_base import MyBase\n"
    root = runtime_backend(tmp_path, BODY, header=header, extra={BASE_FILE: dedent(BASE)})
    source = (root / "vllm/v1/attention/backends/my_attn.py").read_text()
    source = source.replace("class MyBackend(AttentionBackend):", "class MyBackend(MyBase):")
    (root / "vllm/v1/attention/backends/my_attn.py").write_text(source)
    row = rows(analyze(root), "MY_ATTN")[0]
    assert row.head_sizes == ("64", "128")
    # the data list in the base class decides the head sizes ...
    assert row.sources["Head Sizes"] == Location(BASE_FILE, 7)
    # ... a comparison there decides the GPUs ...
    assert row.sources["Compute Cap."] == Location(BASE_FILE, 11)
    # ... and the class's own return decides its flag
    sink = row.sources["Sink"]
    assert sink.path == "vllm/v1/attention/backends/my_attn.py"
    assert source.splitlines()[sink.line - 1].strip() == "return True"


def test_a_class_attribute_is_decided_where_the_nearest_class_assigns_it(tmp_path):
    body = "supported_dtypes = [torch.float16]\n"
    root = runtime_backend(tmp_path, body)
    row = rows(analyze(root), "MY_ATTN")[0]
    assert row.dtypes == ("fp16",)
    where = row.sources["Dtypes"]
    assert where.path == "vllm/v1/attention/backends/my_attn.py"
    text = (root / where.path).read_text().splitlines()[where.line - 1]
    assert text.strip() == "supported_dtypes = [torch.float16]"


GPU_BODY = """
@classmethod
def supports_sink(cls):
    if current_platform.get_device_capability() >= (9, 0):
        return True
    return False
"""


def test_a_cell_not_asked_per_gpu_is_decided_on_the_reference_gpu(tmp_path):
    """A flag that reads the GPU is linked to the line it ends on for the reference
    machine's capability (9.0)."""
    header = "from vllm.platforms import current_platform\n"
    root = runtime_backend(tmp_path, GPU_BODY, header=header)
    row = rows(analyze(root), "MY_ATTN")[0]
    sink = row.sources["Sink"]
    source = (root / sink.path).read_text()
    assert source.splitlines()[sink.line - 1].strip() == "return True"


def test_no_line_where_nothing_was_returned_or_read(tmp_path):
    """No return recorded, no expression, or one that reads no ``cls.<name>``: no
    deciding line from those; a Compute Cap. cell's first GPU is the one asked."""
    from evaluator import load

    from sphinxext_attn.runtime.class_answers import ClassAnswers
    from sphinxext_attn.runtime.deciding_lines import _capability_for, _class_data, _decider

    it, cls = load(tmp_path, "supported_dtypes = [1]\n")
    assert _decider(it, cls, []) is None
    assert _class_data(it, cls, None) is None
    assert (
        _class_data(it, cls, ast.parse("dtype in other.supported_dtypes", mode="eval").body)
        is None
    )
    found = _class_data(it, cls, ast.parse("dtype in cls.supported_dtypes", mode="eval").body)
    assert found is not None and found.path.endswith("my_attn.py")
    facts = ClassAnswers(cells={"Compute Cap.": [[9, 0], [10, 0]], "Head Sizes": [64]})
    assert _capability_for("Compute Cap.", facts) == (9, 0)
    assert _capability_for("Head Sizes", facts) is None
    assert _capability_for("Compute Cap.", ClassAnswers(cells={"Compute Cap.": []})) is None
