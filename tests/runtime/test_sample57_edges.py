"""Runtime edges a sampled mutation run (seed 57) found unpinned, each test failing
with the mutant it was written for: a method lookup the machine model cannot
evaluate, the MLA category of a priority path that reads another flag first, an
annotated class attribute as the deciding line, and the first size of a size rule."""

from __future__ import annotations

from pathlib import Path

from runtime_trees import runtime_backend, runtime_tree
from treebuilder import CUDA, dedent, rows

from sphinxext_attn.analysis.pipeline import analyze
from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.pyeval.values import NODE
from sphinxext_attn.runtime.cell_text import first_head_size
from sphinxext_attn.runtime.priority_titles import evaluated_priorities
from sphinxext_attn.runtime.questions import Asker
from sphinxext_attn.source.tree import SourceTree

ENUM = "from vllm.v1.attention.backends.registry import AttentionBackendEnum as E\n\n\n"


def _asker(root: Path, body: str) -> Asker:
    runtime_backend(root, body, header="import torch\n")
    it = Interpreter(SourceTree(root), Machine())
    return Asker(
        it, it.module_attr(it.module("vllm.v1.attention.backends.my_attn"), "MyBackend", NODE)
    )


def test_a_method_not_evaluated_without_reading_the_gpu_is_unknown(tmp_path):
    """``has`` on a lookup that is unknown on no GPU named, and did not read the GPU:
    the unknown is the answer (the GPU grid would meet the same), not "it has it"."""
    asker = _asker(tmp_path, "supports_sink = torch.thing()\n")
    missing = asker.has("supports_sink")
    assert missing is not None and missing.unknown is not None
    assert not missing.raised


def test_a_priority_path_that_reads_another_flag_before_use_mla_keeps_its_category(tmp_path):
    """The category is that of ``use_mla`` alone: a path reading ``has_sink`` (a name
    sorting before it) is standard when it never reads ``use_mla``, MLA when it does."""
    body = """
    def _get_backend_priorities(use_mla: bool, has_sink: bool):
        if has_sink:
            return [E.FLASHINFER]
        if use_mla:
            return [E.TRITON_MLA]
        return [E.FLASH_ATTN]
    """
    runtime_tree(tmp_path, {CUDA: ENUM + dedent(body)})
    lists = evaluated_priorities(Interpreter(SourceTree(tmp_path), Machine()))
    by_category: dict[str, set[tuple[str, ...]]] = {}
    for item in lists:
        by_category.setdefault(item.category, set()).add(item.backends)
    assert by_category == {
        "standard": {("FLASHINFER",), ("FLASH_ATTN",)},
        "mla": {("TRITON_MLA",)},
    }


def test_an_annotated_class_attribute_is_where_the_answer_is_decided(tmp_path):
    """``supported_dtypes: list = [...]`` decides the Dtypes cell at that line (an
    annotation with no value assigns nothing and is passed over)."""
    body = "supported_dtypes: list = [torch.float16]\n"
    root = runtime_backend(tmp_path, body, header="import torch\n")
    row = rows(analyze(root), "MY_ATTN")[0]
    assert row.dtypes == ("fp16",)
    where = row.sources["Dtypes"]
    assert where.path == "vllm/v1/attention/backends/my_attn.py"
    text = (root / where.path).read_text().splitlines()[where.line - 1]
    assert text.strip() == "supported_dtypes: list = [torch.float16]"


def test_the_first_head_size_of_a_rule_is_its_minimum_else_its_step():
    assert first_head_size([{"min": 64, "max": 256, "multiple_of": 16}]) == 64
    assert first_head_size([{"min": None, "max": 512, "multiple_of": 8}]) == 8
    assert first_head_size([{"min": None, "max": None, "multiple_of": None}, 40]) == 1
