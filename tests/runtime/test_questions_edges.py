"""The questions asked of a backend class (runtime/questions.py) at their edges: a
method that raises for some values or on some GPUs, a string asked alone, the
release modules that name the KV cache dtypes and attention types failing, a tree
without ``DeviceCapability``.

Mutants argued equivalent (no input tells them from the product):
- questions.Asker._ask_strings ``except (Unknown, Raised)`` around the truth of a
  run's answer, narrowed to either: a run follows the path of the first string left
  (``StrExplorer.decide``), and ``alone`` then asks that string by itself, evaluating
  the same code on the same path, so a truth that fails in the run fails alike there
  and the same exception leaves ``ask_each`` either way.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from runtime_trees import (
    BACKEND_INTERFACE,
    PLATFORM_INTERFACE,
    RUNTIME_BACKEND_SOURCE,
    runtime_backend,
)
from treebuilder import dedent

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter, Raised, Unknown
from sphinxext_attn.pyeval.values import NODE
from sphinxext_attn.runtime.questions import (
    Asker,
    attention_types,
    block_size_labels,
    kv_cache_dtypes,
)
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.vocab.names import FALLBACK_KV_DTYPES

HEADER = "import torch\nfrom vllm.platforms import current_platform\n"


def _asker(
    root: Path, body: str, header: str = HEADER, files: dict[str, str | None] | None = None
) -> Asker:
    runtime_backend(root, body, header=header, extra=dict(files or {}))
    it = Interpreter(SourceTree(root), Machine())
    return Asker(
        it, it.module_attr(it.module("vllm.v1.attention.backends.my_attn"), "MyBackend", NODE)
    )


def _method(name: str, arg: str, *lines: str) -> str:
    return f"@classmethod\ndef {name}(cls, {arg}):\n" + "".join(f"    {x}\n" for x in lines)


# -- the release's CacheDType and AttentionType, where reading them fails --------------

CONFIG_CACHE = "vllm/config/cache.py"
CONFIG_INIT = "vllm/config/__init__.py"
LITERAL = 'from typing import Literal\nCacheDType = Literal["auto", "fp8"]\n'


@pytest.mark.parametrize(
    "broken",
    ['CacheDType = int("x")\n', "import torch\nCacheDType = torch.thing()\n"],
    ids=["raises", "unknown"],
)
def test_a_cache_dtype_module_that_fails_is_passed_for_the_next(tmp_path, broken):
    """``vllm.config.cache`` raising (or not evaluated): ``vllm.config``'s literal is
    read (narrowing the ``except`` to either kind let the other out)."""
    asker = _asker(tmp_path, "pass\n", files={CONFIG_CACHE: broken, CONFIG_INIT: LITERAL})
    assert kv_cache_dtypes(asker.interp) == ("auto", "fp8")


def test_a_cache_dtype_that_is_no_literal_of_strings_gives_the_fallback(tmp_path):
    asker = _asker(
        tmp_path,
        "pass\n",
        files={
            CONFIG_CACHE: 'CacheDType = "auto"\n',
            CONFIG_INIT: "from typing import Literal\nCacheDType = Literal[1, 2]\n",
        },
    )
    assert kv_cache_dtypes(asker.interp) == FALLBACK_KV_DTYPES


ENUM = (
    'class AttentionType(str, Enum):\n    DECODER = "decoder"\n    ENCODER = "encoder"\n'
    '    ENCODER_ONLY = "encoder_only"\n    ENCODER_DECODER = "encoder_decoder"\n'
)


@pytest.mark.parametrize(
    "broken", ['AttentionType = int("x")\n', "AttentionType = torch.thing()\n"]
)
def test_an_attention_type_that_fails_is_taken_from_the_next_class(tmp_path, broken):
    """The interface's ``AttentionType`` raising (or not evaluated): the backend's own
    module's is read (narrowing the ``except`` to either kind let the other out)."""
    interface = dedent(RUNTIME_BACKEND_SOURCE)
    assert ENUM in interface
    header = 'from enum import Enum\n\n\nclass AttentionType(str, Enum):\n    MINE = "mine"\n'
    asker = _asker(
        tmp_path,
        "pass\n",
        header=header,
        files={BACKEND_INTERFACE: interface.replace(ENUM, broken)},
    )
    assert [name for name, _ in attention_types(asker.interp, asker.cls)] == ["MINE"]


# -- the capability grid without a DeviceCapability ---------------------------------

CAPABILITY_CHECK = _method(
    "supports_compute_capability", "capability", "return capability.major >= 9"
)


@pytest.mark.parametrize(
    ("interface", "reason"),
    [
        (None, "no vllm/platforms/interface.py in the tree"),
        ("class Other:\n    pass\n", "name DeviceCapability is not defined"),
        ('DeviceCapability = int("x")\n', "invalid literal for int()"),
    ],
)
def test_no_device_capability_class_is_an_unknown_grid(tmp_path, interface, reason):
    """The class the GPU is made of missing, or raising: the capabilities are
    unknown, with why (an ``except`` narrowed to either kind let the other out)."""
    asker = _asker(tmp_path, CAPABILITY_CHECK, files={PLATFORM_INTERFACE: interface})
    answer = asker.capabilities()
    assert answer.value is None and isinstance(answer.unknown, Unknown)
    assert reason in str(answer.unknown)


# -- one question over several values -----------------------------------------------


def test_block_sizes_are_read_only_from_a_list_of_sizes():
    assert block_size_labels([16, 32]) == ["16", "32"]
    assert block_size_labels(16) is None
    assert block_size_labels([16, True]) is None
    assert block_size_labels([16, "32"]) is None


def test_a_value_the_method_raises_for_is_refused_and_a_gpu_answer_joined(tmp_path):
    """80 raises: not accepted, the values after it still asked; 256 only on
    Blackwell: accepted, the answer marked as by GPU."""
    body = _method(
        "supports_head_size",
        "head_size",
        "if head_size == 80:",
        "    raise ValueError('no 80')",
        "if head_size == 256:",
        "    return current_platform.is_device_capability_family(100)",
        "return head_size == 64",
    )
    answer = _asker(tmp_path, body).ask_each(
        "supports_head_size", [64, 80, 256, 96], ["64", "80", "256", "96"]
    )
    assert answer.unknown is None
    assert answer.value == ["64", "256"] and answer.by_capability


def test_a_value_not_evaluated_makes_the_whole_answer_unknown(tmp_path):
    body = _method(
        "supports_head_size",
        "head_size",
        "if head_size == 512:",
        "    return torch.thing()",
        "return True",
    )
    answer = _asker(tmp_path, body).ask_each("supports_head_size", [64, 512], ["64", "512"])
    assert "call into torch.thing" in str(answer.unknown)


def test_a_method_without_the_argument_vllm_passes_is_no_answer(tmp_path):
    body = "@classmethod\ndef supports_head_size(cls):\n    return True\n"
    answer = _asker(tmp_path, body).ask_each("supports_head_size", [64], ["64"])
    assert str(answer.unknown).startswith(
        "supports_head_size() does not take the 1 argument(s) vLLM passes"
    )


def test_a_string_the_method_raises_for_is_refused(tmp_path):
    body = _method(
        "supports_kv_cache_dtype",
        "kv_cache_dtype",
        "if kv_cache_dtype == 'fp8':",
        "    raise ValueError('no fp8')",
        "return True",
    )
    values = ["auto", "fp8", "bfloat16"]
    answer = _asker(tmp_path, body).ask_each("supports_kv_cache_dtype", values, values)
    assert answer.value == ["auto", "bfloat16"] and not answer.by_capability


def test_a_string_asked_alone_is_refused_where_it_raises(tmp_path):
    """``upper()`` is not kept abstract: each string is asked alone; fp8 raises
    (refused), the others answer by their value."""
    body = _method(
        "supports_kv_cache_dtype",
        "kv_cache_dtype",
        "name = kv_cache_dtype.upper()",
        "if name == 'FP8':",
        "    raise ValueError('no fp8')",
        "return name != 'BFLOAT16'",
    )
    values = ["auto", "fp8", "bfloat16", "fp8_e4m3"]
    answer = _asker(tmp_path, body).ask_each("supports_kv_cache_dtype", values, values)
    assert answer.value == ["auto", "fp8_e4m3"]


def test_an_answer_whose_truth_raises_raises(tmp_path):
    header = HEADER + (
        "\n\nclass Verdict:\n    def __init__(self, name):\n        self.name = name\n\n"
        "    def __bool__(self):\n        if self.name == 'fp8':\n"
        "            raise ValueError('no verdict')\n        return True\n"
    )
    body = _method("supports_kv_cache_dtype", "kv_cache_dtype", "return Verdict(kv_cache_dtype)")
    asker = _asker(tmp_path, body, header=header)
    with pytest.raises(Raised, match="no verdict"):
        asker.ask_each("supports_kv_cache_dtype", ["auto", "fp8"], ["auto", "fp8"])


def test_a_gpu_the_check_raises_on_is_left_out_of_the_grid(tmp_path):
    """Ampere and 13.x raise: their GPUs are not accepted; the others from Hopper on
    are (13.x and 14.0 are asked because the check names major 13)."""
    body = _method(
        "supports_compute_capability",
        "capability",
        "if capability.major == 8 or capability.major == 13:",
        "    raise ValueError('not on Ampere, nor on 13.x')",
        "return capability.major >= 9",
    )
    answer = _asker(tmp_path, body).capabilities()
    assert answer.unknown is None
    assert answer.value and all(major >= 9 for major, _ in answer.value)
    assert (13, 0) in answer.capabilities and (13, 0) not in answer.value  # named, off the grid
    assert (14, 0) in answer.value
    assert any(major == 8 for major, _ in answer.capabilities)
    assert any(major < 8 for major, _ in answer.capabilities)
