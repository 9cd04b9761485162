"""The converters every way of giving a configuration goes through (select/inputs.py),
and how the conditions of a list are put in words."""

from __future__ import annotations

import pytest
import vllm_trees

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.runtime.priority_paths import Choice
from sphinxext_attn.runtime.priority_titles import _numbers
from sphinxext_attn.selection import inputs
from sphinxext_attn.selection.platform_lists import _factored


@pytest.mark.parametrize("good", ["9.0", "12.1", " 8.6 ", 10.0])
def test_a_capability_is_major_dot_minor(good):
    assert inputs.capability(good) == str(good).strip()


@pytest.mark.parametrize("bad", ["9", "9.", "100.0", "9.10", "sm90", "", None])
def test_anything_else_is_refused_with_the_value(bad):
    with pytest.raises(ValueError, match="is not a compute capability"):
        inputs.capability(bad)


def test_numbers_are_said_as_points_and_ranges():
    chosen = [
        Choice(64, "64", (64, 64)),
        Choice(80, "80", (65, 96)),
        Choice(128, "128", (128, 128)),
        Choice(None, "?"),
    ]
    assert _numbers(chosen) == ["unknown", "64-96", "128"]
    assert _numbers([Choice(1, "1", (float("-inf"), 7))]) == ["≤ 7"]
    assert _numbers([Choice(9, "9", (9, float("inf")))]) == ["≥ 9"]


def test_one_alternative_of_several_words_needs_no_parentheses():
    dims = {"a": [0, 1, 2], "b": [0, 1, 2]}
    one = [{"a": frozenset({1}), "b": frozenset({2})}]
    assert _factored(one, dims) == "a=1, b=2"
    anything = {"a": frozenset({0, 1, 2}), "b": frozenset({0, 1, 2})}
    assert _factored([*one, anything], dims) == "a=1, b=2"  # the other says nothing
    two = [*one, {"a": frozenset({2}), "b": frozenset({0})}]
    assert _factored(two, dims) == "(a=1, b=2) or (a=2, b=0)"


@pytest.mark.realtree
def test_the_backends_that_run_flash_attention_are_found_by_their_own_name():
    from sphinxext_attn.pyeval import Interpreter
    from sphinxext_attn.selection.fa_version import uses_flash_attn
    from sphinxext_attn.source.registry import read_registry
    from sphinxext_attn.source.tree import SourceTree

    tree = SourceTree(vllm_trees.tree("0.33.0"))
    interp = Interpreter(tree, Machine())
    found = [e.name for e in read_registry(tree) if uses_flash_attn(interp, e.name)]
    assert found == [
        "FLASH_ATTN",
        "FLASH_ATTN_DIFFKV",
        "TRITON_FLASH_ATTN",
        "FLASH_ATTN_MLA",
        "TURBOQUANT",
        "ULTRAQUANT",
    ]


ACCEPTED = [
    (inputs.dtype, " BFloat16 ", "bfloat16"),
    (inputs.kv_cache_dtype, " fp8_e4m3 ", "fp8_e4m3"),
    (inputs.attn_type, "encoder-only", "ENCODER_ONLY"),
    (inputs.backend_name, "flash_attn", "FLASH_ATTN"),
    (inputs.backend_name, "A" + "B" * 63, "A" + "B" * 63),
    (inputs.positive_int, "128", 128),
    (inputs.positive_int, 1, 1),
    (inputs.platform, " rocm ", "rocm"),
    (inputs.arch, "GFX90a", "gfx90a"),
    (inputs.backend, "_Flash9", "_Flash9"),
    (inputs.backend_request, "FLASH_ATTN", ("", "FLASH_ATTN")),
    (inputs.backend_request, "mla_attention=FLASHMLA", ("mla_attention", "FLASHMLA")),
    (inputs.boolean, False, False),
    (inputs.optional(inputs.positive_int), None, None),
    (inputs.optional(inputs.positive_int), 3, 3),
    (inputs.string, "", ""),
    (inputs.mapping, {"A": 1}, {"A": 1}),
    (inputs.case_capability, 9.0, "9.0"),
    (inputs.case_capability, "12.1", "12.1"),
]


@pytest.mark.parametrize(("convert", "value", "want"), ACCEPTED)
def test_each_converter_gives_the_value_as_used(convert, value, want):
    assert convert(value) == want


REFUSED = [
    (inputs.dtype, "", "'nothing' unknown; choose from"),
    (inputs.dtype, "half-ish", "'half-ish' unknown"),
    (inputs.kv_cache_dtype, "fp8-e4m3", "is not a KV cache dtype"),
    (inputs.kv_cache_dtype, None, "'nothing' is not a KV cache dtype"),
    (inputs.attn_type, "sideways", "'sideways' unknown; choose from decoder"),
    (inputs.backend_name, "9LIVES", "'9LIVES' is not a backend name"),
    (inputs.backend_name, "", "'nothing' is not a backend name"),
    (inputs.backend_name, "A" + "B" * 64, "is not a backend name"),
    (inputs.backend_name, "FLASH-ATTN", "is not a backend name"),
    (inputs.positive_int, True, "True is not a positive integer"),
    (inputs.positive_int, 1.0, "is not a positive integer"),
    (inputs.positive_int, "x1", "'x1' is not a positive integer"),
    (inputs.positive_int, 0, "0 is not a positive integer (give 1 or more)"),
    (inputs.positive_int, "-3", "(give 1 or more)"),
    (inputs.platform, "", "'nothing' unknown; choose from cuda, rocm"),
    (inputs.arch, "sm90", "'sm90' is not a GPU arch"),
    (inputs.arch, "gfx94z", "is not a GPU arch"),
    (inputs.backend, 5, "'5' is not a backend name"),
    (inputs.backend, "FLASH ATTN", "is not a backend name"),
    (inputs.backend, "", "'nothing' is not a backend name"),
    (inputs.backend_request, "MLA=FLASHMLA", "'MLA' is not a KV-cache kind"),
    (inputs.backend_request, "=FLASHMLA", "'' is not a KV-cache kind"),
    (inputs.backend_request, "mla=", "'nothing' is not a backend name"),
    (inputs.boolean, 1, "1 is not true or false"),
    (inputs.string, 1, "1 is not a string"),
    (inputs.mapping, [], "is not an object of NAME: VALUE"),
    (inputs.mapping, {1: "x"}, "is not an object of NAME: VALUE"),
    (inputs.case_capability, True, "True is not a compute capability"),
    (inputs.case_capability, None, "None is not a compute capability"),
    (inputs.case_capability, 9, "'9' is not a compute capability"),
]


@pytest.mark.parametrize(("convert", "value", "message"), REFUSED)
def test_each_converter_refuses_with_the_value_and_what_is_accepted(convert, value, message):
    with pytest.raises(ValueError) as raised:
        convert(value)
    assert message in str(raised.value)


def test_a_kv_cache_dtype_is_checked_against_the_release_only_when_it_lists_some():
    inputs.check_kv_cache_dtype(None, ("auto", "fp8"))
    inputs.check_kv_cache_dtype("int4", ())
    inputs.check_kv_cache_dtype("fp8", ("auto", "fp8"))
    with pytest.raises(ValueError, match="'int4' is not a KV cache dtype of this release; choose"):
        inputs.check_kv_cache_dtype("int4", ("auto", "fp8"))


def test_the_config_classes_are_found_by_following_imports(tmp_path):
    from sphinxext_attn.selection.option_fields import ConfigReader
    from sphinxext_attn.source.tree import SourceTree

    files = {
        "vllm/__init__.py": "",
        "vllm/config/__init__.py": "from vllm.config.cache import CacheConfig\n",
        "vllm/config/cache.py": "class CacheConfig:\n    block_size: int = 16\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    reader = ConfigReader(SourceTree(tmp_path))
    found = reader.binding("vllm.config", "CacheConfig")
    assert found is not None and found[0] == "vllm/config/cache.py"
    assert getattr(found[1], "name", "") == "CacheConfig"
    assert reader.binding("vllm.config", "ModelConfig") is None


def test_a_case_file_is_a_list_of_objects_each_checked():
    assert inputs.check_cases([]) == []
    with pytest.raises(ValueError, match=r"^it holds dict, not a JSON list of cases$"):
        inputs.check_cases({"config": {}})
    with pytest.raises(ValueError, match=r"^case 1: 7 is not an object"):
        inputs.check_cases([{"config": {}}, 7])
    with pytest.raises(ValueError, match=r"^case 0: config key 'capability' unknown: "):
        inputs.check_cases([{"config": {"capability": "9.0"}}])


def test_a_bad_value_is_named_with_its_case_and_key():
    with pytest.raises(ValueError, match=r"^case 2: platform: 'tpu2' unknown; choose from "):
        inputs.check_case(2, {"platform": "tpu2"})
    with pytest.raises(ValueError, match=r"^case 0: config: head_size: "):
        inputs.check_case(0, {"config": {"head_size": -1}})
