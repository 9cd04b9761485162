"""The safe evaluator per GPU: answers that read the device capability are memoised
per capability and never mixed (module and class values included), a call that never
reads it is remembered once, and FlashAttention versions of a full build are answered
per GPU when the tree lacks the module."""

from __future__ import annotations

import pytest
from evaluator import HEADER, NODE, ask, cm, load
from treebuilder import dedent

from sphinxext_attn.pyeval import Unknown

CAP_BODY = """
@classmethod
def major(cls):
    return current_platform.get_device_capability().major

@classmethod
def f(cls, head_size):
    if current_platform.is_device_capability_family(100):
        return head_size <= 256
    return cls.major() >= 9 and head_size <= 128 and current_platform.is_cuda()
"""


def test_memoised_answers_do_not_mix_capabilities(tmp_path):
    it, cls = load(tmp_path, dedent(CAP_BODY))
    with pytest.raises(Unknown, match="compute capability"):
        ask(it, cls, "f", 192)
    caps = [(9, 0), (10, 0), (8, 0), (10, 3), (9, 0)]
    assert [ask(it, cls, "f", 192, capability=c) for c in caps] == [
        False, True, False, True, False,
    ]  # fmt: skip
    assert [ask(it, cls, "major", capability=c) for c in [(12, 1), (8, 6), (12, 1)]] == [12, 8, 12]
    with pytest.raises(Unknown, match="compute capability"):
        ask(it, cls, "f", 192)  # an answer memoised for a GPU is not an answer without one


def test_a_call_that_never_reads_the_gpu_is_remembered_for_every_gpu(tmp_path):
    """A call that did not read the device capability answers for every GPU (one
    memo entry); one whose path reads it is still remembered per GPU."""
    body = cm("g", "return x * 2", args="x") + cm(
        "h", "if x > 1:", "    return current_platform.get_device_capability().major", "return 0",
        args="x",
    )  # fmt: skip
    it, cls = load(tmp_path, body)
    g = it.getattr(cls, "g", NODE, "").func
    assert [ask(it, cls, "g", 3, capability=c) for c in [(9, 0), (10, 0), None]] == [6, 6, 6]
    assert len([k for k in it.call_memo.answers if k[0] is g]) == 1
    assert [ask(it, cls, "h", 0, capability=c) for c in [(9, 0), None]] == [0, 0]
    assert [ask(it, cls, "h", 2, capability=c) for c in [(9, 0), (10, 0), (9, 0)]] == [9, 10, 9]
    with pytest.raises(Unknown, match="compute capability"):
        ask(it, cls, "h", 2)


def test_flash_attention_versions_of_a_full_build_when_the_tree_lacks_the_module(tmp_path):
    """Releases before 0.17 ship no vllm_flash_attn source: the machine answers as
    a full build (FA2 from 8.0, FA3 on 9.x, FA4 on 9.x to 11.x), per GPU."""
    body = cm(
        "f",
        "from vllm.vllm_flash_attn.flash_attn_interface import is_fa_version_supported",
        "return [is_fa_version_supported(v) for v in (2, 3, 4)]",
    )
    it, cls = load(tmp_path, body)
    caps = [(7, 5), (8, 0), (9, 0), (10, 0), (12, 0)]
    assert [ask(it, cls, "f", capability=c) for c in caps] == [
        [False, False, False],
        [True, False, False],
        [True, True, True],
        [True, False, True],
        [True, False, False],
    ]
    with pytest.raises(Unknown, match="compute capability"):
        ask(it, cls, "f")


def test_module_and_class_values_do_not_mix_capabilities(tmp_path):
    header = HEADER + "MAJOR = current_platform.get_device_capability().major\n"
    body = "big = current_platform.get_device_capability().major\n\n" + cm(
        "f", "return MAJOR, cls.big"
    )
    it, cls = load(tmp_path, body, header=header)
    assert [ask(it, cls, "f", capability=c) for c in [(9, 0), (10, 0)]] == [(9, 9), (10, 10)]
