"""Runtime behaviours a sampled mutation run (seed 59) found unpinned, each test
failing with the mutant it was written for: a machine fact read is not a GPU read
(a look-up that read an environment variable and is unknown is that unknown; a
full check that reads one is asked on one GPU), and where a ``DeviceCapability``
too deeply nested to evaluate is reported."""

from __future__ import annotations

from typing import Any

from accepts_trees import COMBINATION_SIGNATURE, one_checked_tree
from runtime_trees import PLATFORM_INTERFACE, RUNTIME_FILES, runtime_backend
from treebuilder import dedent, rows

from sphinxext_attn.analysis.pipeline import analyze
from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.pyeval.values import NODE
from sphinxext_attn.runtime import accepts
from sphinxext_attn.runtime.full_check import FullCheck
from sphinxext_attn.runtime.questions import Asker
from sphinxext_attn.source.tree import SourceTree

PICKS = "vllm/v1/attention/ops/picks.py"
PICK = """
import os


def pick():
    if os.getenv("VLLM_PICKED_KERNEL") is None:
        return not_defined_anywhere()
    return None
"""


def test_a_look_up_unknown_after_reading_a_fact_but_no_gpu_is_that_unknown(tmp_path):
    """The member's look-up read an environment variable, not the GPU, and is
    unknown: the class has no answer for it, said with that unknown (``not read &
    CAPABILITY`` -> ``not read / CAPABILITY`` took the fact's bit for the GPU's,
    left the loop and said the class had the method)."""
    header = "from vllm.v1.attention.ops.picks import pick\n"
    runtime_backend(
        tmp_path, "supports_kv_cache_dtype = pick()\n", header=header, extra={PICKS: dedent(PICK)}
    )
    it = Interpreter(SourceTree(tmp_path), Machine())
    cls = it.module_attr(it.module("vllm.v1.attention.backends.my_attn"), "MyBackend", NODE)
    asker = Asker(it, cls)
    missing = asker.has("supports_kv_cache_dtype")
    assert missing is not None and missing.value is None and not missing.raised
    assert str(missing.unknown) == (
        "name not_defined_anywhere is not defined (vllm/v1/attention/ops/picks.py:6)"
    )
    assert asker.assumed() == []  # ``has`` asks outside the calls' record
    assert it.facts_of(-1) == [("VLLM_PICKED_KERNEL", "unset")]


UNBUILT = (
    """
import os

from vllm.v1.attention.backend import AttentionBackend


class UnbuiltBackend(AttentionBackend):
    pass
"""
    + COMBINATION_SIGNATURE
    + """\
        if os.getenv("VLLM_UNBUILT_KERNEL") is None:
            return "the kernel is not built"
        return None
"""
)


def test_a_full_check_reading_a_fact_but_no_gpu_is_asked_on_one_gpu(tmp_path, monkeypatch):
    """The check reads an environment variable and refuses every configuration: it
    read no parameter and no GPU, so it is asked on the first GPU only and said to
    refuse every configuration, with the fact it assumed (``q.read & CAPABILITY``
    -> ``*`` counted the fact's read as the GPU's and asked it on every GPU)."""
    asked: list[tuple[Any, list[str]]] = []

    class Recorded(FullCheck):
        def run(self, config: dict[str, Any], record: bool = False) -> tuple[Any, list[str], Any]:
            value, order, question = super().run(config, record)
            asked.append((config["device_capability"], order))
            return value, order, question

    monkeypatch.setattr(accepts, "FullCheck", Recorded)
    module = "vllm/v1/attention/backends/unbuilt.py"
    root = one_checked_tree(tmp_path, "UNBUILT_ATTN", module, "UnbuiltBackend", UNBUILT)
    row = rows(analyze(root), "UNBUILT_ATTN")[0]
    assert asked == [((7, 0), [])] * 3  # the seed, its other paths (none), the refusal
    assert row.accepts["unknown"] == dict.fromkeys(
        ["Head Sizes", "Block Sizes", "Compute Cap."],
        "the full check refuses every configuration tried: the kernel is not built "
        "(assuming VLLM_UNBUILT_KERNEL=unset)",
    )


def test_a_device_capability_nested_too_deeply_is_the_class_s_unknown(tmp_path):
    """``DeviceCapability`` is looked up outside any question: an expression too
    deep to evaluate is a limit at the class's file, no line (``(path, 0)`` ->
    ``(path, -1)`` said line -1)."""
    deep = "-" * 1000 + "1"
    interface = (
        RUNTIME_FILES[PLATFORM_INTERFACE]
        .replace("class DeviceCapability(NamedTuple):", "class _Capability(NamedTuple):")
        .replace(
            "\nclass Platform:",
            f"\nDeviceCapability = _Capability if {deep} else None\n\n\nclass Platform:",
        )
    )
    body = "@classmethod\ndef supports_compute_capability(cls, capability):\n    return True\n"
    runtime_backend(tmp_path, body, extra={PLATFORM_INTERFACE: interface})
    row = rows(analyze(tmp_path), "MY_ATTN")[0]
    assert row.unknown == {
        "Compute Cap.": "expression nested too deeply (vllm/v1/attention/backends/my_attn.py)"
    }
