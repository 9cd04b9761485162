"""Pins on the questions asked of a backend class (runtime/questions.py) that the
edge tests left loose: a block size item that is a tree instance but not a
``MultipleOf`` (no ``base`` field), an impl class that is not implemented or
raises, a method with a default parameter or a required keyword-only one, a
member too deeply nested to look up, a member the class body defines for no GPU
of the grid, a first KV dtype module without the literal, a string asked alone whose answer
is by GPU, a builtin as the method, the facts an answer rests on once they are
said, a flag answered with a value that is not a bool.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from runtime_trees import runtime_backend

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Instance, Interpreter, PyClass
from sphinxext_attn.pyeval.values import NODE
from sphinxext_attn.runtime.questions import Asker, block_size_labels, kv_cache_dtypes
from sphinxext_attn.source.tree import SourceTree


def _asker(
    root: Path, body: str = "pass\n", header: str = "", files: dict[str, str] | None = None
) -> Asker:
    runtime_backend(root, body, header=header, extra=dict(files or {}))
    it = Interpreter(SourceTree(root), Machine())
    cls = it.module_attr(it.module("vllm.v1.attention.backends.my_attn"), "MyBackend", NODE)
    assert isinstance(cls, PyClass)
    return Asker(it, cls)


def test_a_block_size_instance_without_a_base_is_no_list_of_sizes(tmp_path):
    """Only an instance holding exactly ``base`` is a ``MultipleOf``: one with no
    field, or with another beside it, makes the list no list of sizes."""
    cls = _asker(tmp_path).cls
    assert block_size_labels([Instance(cls, {"base": 16}), 32]) == ["%16", "32"]
    assert block_size_labels([Instance(cls, {})]) is None
    assert block_size_labels([Instance(cls, {"base": 16, "step": 2})]) is None


@pytest.mark.parametrize(
    ("raises", "value", "raised"),
    [
        ("NotImplementedError", False, ""),
        ("ValueError('no impl')", None, "ValueError: no impl"),
        ("AttributeError('gone')", None, "AttributeError: gone"),
    ],
)
def test_an_impl_class_not_implemented_has_no_capability(tmp_path, raises, value, raised):
    """``get_impl_cls`` raising ``NotImplementedError`` (the interface's): no impl
    class, so no capability (False, not True); any other exception is the answer's
    raise, with its message (not taken for "not implemented"). The kind of the
    builtin is a string built at run time, so it is compared by value, not identity."""
    body = f"@staticmethod\ndef get_impl_cls():\n    raise {raises}\n"
    answer = _asker(tmp_path, body).ask_impl_flag("supports_dcp")
    assert (answer.value, answer.raised, answer.unknown) == (value, raised, None)


def test_a_method_with_a_default_parameter_takes_one_argument(tmp_path):
    """``supports_head_size(cls, head_size, strict=True)`` binds the one argument
    vLLM passes (one parameter required, not more): each size is asked."""
    body = "@classmethod\ndef supports_head_size(cls, head_size, strict=True):\n"
    body += "    return head_size == 64 or not strict\n"
    answer = _asker(tmp_path, body).ask_each("supports_head_size", [64, 80], ["64", "80"])
    assert (answer.value, answer.unknown) == (["64"], None)


@pytest.mark.parametrize(
    "signature",
    [
        # a second parameter without a default is not bound (not the call's own TypeError)
        "@classmethod\ndef supports_head_size(cls, head_size, extra):\n",
        # vLLM passes no ``strict``: a required keyword-only parameter is not bound
        "@classmethod\ndef supports_head_size(cls, head_size, *, strict):\n",
        # a static method binds no class: both its parameters count
        "@staticmethod\ndef supports_head_size(head_size, extra):\n",
    ],
    ids=["two-required", "keyword-only", "static"],
)
def test_a_method_that_needs_more_than_one_argument_does_not_take_one(tmp_path, signature):
    """vLLM passes one argument: a method that needs more does not take the call
    (unknown, saying so)."""
    answer = _asker(tmp_path, signature + "    return True\n").ask_each(
        "supports_head_size", [64], ["64"]
    )
    assert answer.value is None and not answer.raised
    assert str(answer.unknown).startswith(
        "supports_head_size() does not take the 1 argument(s) vLLM passes"
    )


def test_a_member_too_deeply_nested_to_look_up_is_a_limit_at_the_class_s_file(tmp_path):
    """The member is looked up in a question of its own, placed at the class's file
    with no line: the limit is said there (``(path, 0)`` -> ``(path, 1)`` said line 1)."""
    deep = "-" * 1000 + "1"
    asker = _asker(tmp_path, f"supports_head_size = None if {deep} else None\n")
    missing = asker.has("supports_head_size")
    assert missing is not None and missing.value is None and not missing.raised
    assert str(missing.unknown) == (
        "expression nested too deeply (vllm/v1/attention/backends/my_attn.py)"
    )


def test_a_member_defined_for_no_gpu_of_the_grid_is_missing(tmp_path):
    """The class body reads the GPU to define the member (unknown with no GPU named),
    and defines it on none of the grid's: every GPU is asked, and the class does not
    have it, as the look-up raised (leaving after the first try said it had)."""
    body = (
        "if current_platform.get_device_capability().major == 99:\n"
        "    @classmethod\n    def supports_fancy(cls):\n        return True\n"
    )
    header = "from vllm.platforms import current_platform\n"
    missing = _asker(tmp_path, body, header).has("supports_fancy")
    assert missing is not None and missing.unknown is None
    assert missing.raised.startswith("AttributeError")


def test_a_first_cache_dtype_module_without_the_literal_is_passed_for_the_next(tmp_path):
    """``vllm.config.cache`` defines no ``CacheDType``: ``vllm.config``'s is read, not
    the fallback."""
    literal = 'from typing import Literal\nCacheDType = Literal["auto", "fp8"]\n'
    files = {"vllm/config/cache.py": "BLOCK = 16\n", "vllm/config/__init__.py": literal}
    assert kv_cache_dtypes(_asker(tmp_path, files=files).interp) == ("auto", "fp8")


def test_a_string_asked_alone_that_depends_on_the_gpu_marks_the_answer_by_gpu(tmp_path):
    """ "fp8" reads the GPU (unknown with none named), so it is asked alone over the
    grid and accepted on Blackwell: the answer is marked as by GPU."""
    body = "@classmethod\ndef supports_kv_cache_dtype(cls, kv):\n"
    body += "    return kv == 'fp8' and current_platform.is_device_capability_family(100)\n"
    header = "from vllm.platforms import current_platform\n"
    asker = _asker(tmp_path, body, header)
    answer = asker.ask_each("supports_kv_cache_dtype", ["auto", "fp8"], ["auto", "fp8"])
    assert (answer.value, answer.by_capability, answer.unknown) == (["fp8"], True, None)


def test_a_builtin_as_the_method_is_called_with_the_argument(tmp_path):
    """``supports_head_size = bool``: not a function of the tree, so it is taken to
    accept the argument, and called: 0 is refused, 64 accepted."""
    answer = _asker(tmp_path, "supports_head_size = bool\n").ask_each(
        "supports_head_size", [64, 0], ["64", "0"]
    )
    assert (answer.value, answer.unknown) == (["64"], None)


def test_the_facts_said_are_those_read_since_they_were_last_said(tmp_path):
    """The first answer read an environment variable, the second nothing: the
    second rests on no fact (the first's is not said again)."""
    body = (
        "@classmethod\ndef supports_sink(cls):\n"
        "    return os.getenv('VLLM_SINKS') is not None\n"
        "@classmethod\ndef supports_mm_prefix(cls):\n    return True\n"
    )
    asker = _asker(tmp_path, body, "import os\n")
    assert asker.ask("supports_sink").value is False
    assert asker.assumed() == ["VLLM_SINKS=unset"]
    assert asker.ask("supports_mm_prefix").value is True
    assert asker.assumed() == []


def test_a_flag_answered_with_a_truthy_value_is_true(tmp_path):
    """``supports_sink`` returning ``"yes"``: the flag is its truth, True."""
    body = "@classmethod\ndef supports_sink(cls):\n    return 'yes'\n"
    answer = _asker(tmp_path, body).ask_flag("supports_sink")
    assert (answer.value, answer.unknown, answer.raised) == (True, None, "")


def test_sizes_no_gpu_decides_are_one_answer_for_every_gpu(tmp_path):
    body = "@classmethod\ndef supports_head_size(cls, head_size):\n    return head_size == 64\n"
    answer = _asker(tmp_path, body).ask_each("supports_head_size", [64, 80], ["64", "80"])
    assert (answer.value, answer.by_capability) == (["64"], False)


def test_a_flag_with_no_answer_keeps_no_value(tmp_path):
    """An unknown flag (the method does not take the call) is not taken for False."""
    body = "@classmethod\ndef is_flag(cls, extra):\n    return True\n"
    answer = _asker(tmp_path, body).ask_flag("is_flag")
    assert answer.value is None and answer.unknown is not None
