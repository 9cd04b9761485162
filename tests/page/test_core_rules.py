"""The seed's rules, one by one, on small invented vLLM-shaped trees.

Tests go through ``analyze_page(root)`` and the command line, and assert cell texts
as vLLM's generator writes them, so the rules may be generalised freely.
"""

from __future__ import annotations

import pytest
from treebuilder import (
    CUDA,
    FA_UTILS,
    FLASHINFER_UTILS,
    analyze_backend,
    analyze_page,
    build_tree,
    dedent,
    one_backend,
    row,
    rows,
)

from sphinxext_attn.page.priorities import read_priorities
from sphinxext_attn.render.markdown import render_markdown
from sphinxext_attn.source.tree import SourceTree


def method(name: str, body: str, deco: str = "@classmethod") -> str:
    return f"{deco}\ndef {name}(cls, *args):\n    {body}\n"


# -- block and head sizes ---------------------------------------------------
@pytest.mark.parametrize(
    ("returned", "cell"),
    [
        ("[MultipleOf(16)]", "%16"),
        ("[16, 32, 64]", "16, 32, 64"),
        ("[MultipleOf(32), 64]", "%32, 64"),
        ("[]", "Any"),
    ],
)
def test_block_sizes(tmp_path, returned, cell):
    body = method("get_supported_kernel_block_sizes", f"return {returned}", "@staticmethod")
    assert analyze_backend(tmp_path, body).cell("Block Sizes") == cell


def test_head_sizes_and_defaults(tmp_path):
    r = analyze_backend(tmp_path, method("get_supported_head_sizes", "return [64, 128, 576]"))
    assert r.cell("Head Sizes") == "64, 128, 576"
    assert r.cell("Block Sizes") == "Any"


def test_empty_class_gets_every_default(tmp_path):
    r = analyze_backend(tmp_path, "pass\n")
    assert [r.cell(c) for c in ("Dtypes", "KV Dtypes", "Block Sizes", "Head Sizes")] == [
        "fp16, bf16",
        "auto",
        "Any",
        "Any",
    ]
    assert r.cell("Attention Types") == "Decoder"
    assert r.cell("Compute Cap.") == "Any"
    assert (r.cell("Sink"), r.cell("MM Prefix"), r.cell("Sparse")) == ("❌", "❌", "❌")
    assert r.table == "standard"


# -- compute capability -----------------------------------------------------
@pytest.mark.parametrize(
    ("check", "cell"),
    [
        ("capability >= DeviceCapability(8, 0)", "≥8.0"),
        ("capability >= DeviceCapability(7, 5)", "≥7.5"),
        ("capability >= DeviceCapability(9)", "≥9.0"),
        (
            "capability >= DeviceCapability(7, 0) and capability <= DeviceCapability(12, 1)",
            "7.x-12.x",
        ),
        ("capability.major == 9", "9.x"),
        ("capability.major in [9, 10]", "9.x-10.x"),
        ("capability.major in [12, 10, 11]", "10.x-12.x"),
        ("True", "Any"),
    ],
)
def test_compute_capability(tmp_path, check, cell):
    body = method("supports_compute_capability", f"return {check}")
    assert analyze_backend(tmp_path, body).cell("Compute Cap.") == cell


@pytest.mark.parametrize("name", ["CPU_ATTN2", "ROCM_AITER_FA"])
def test_non_cuda_backends_have_no_capability(tmp_path, name):
    body = method("supports_compute_capability", "return capability.major == 9")
    assert analyze_backend(tmp_path, body, name=name).cell("Compute Cap.") == "N/A"


# -- attention types --------------------------------------------------------
@pytest.mark.parametrize(
    ("types", "cell"),
    [
        ("(AttentionType.DECODER, AttentionType.ENCODER_ONLY)", "Decoder, Encoder Only"),
        (
            "(AttentionType.DECODER, AttentionType.ENCODER, "
            "AttentionType.ENCODER_ONLY, AttentionType.ENCODER_DECODER)",
            "All",
        ),
        ("{AttentionType.DECODER, AttentionType.ENCODER_DECODER}", "Decoder, Enc-Dec"),
        ("(AttentionType.DECODER,)", "Decoder"),
        ("(AttentionType.NOT_A_TYPE,)", "Decoder"),
    ],
)
def test_attention_types(tmp_path, types, cell):
    body = method("supports_attn_type", f"return attn_type in {types}")
    assert analyze_backend(tmp_path, body).cell("Attention Types") == cell


# -- dtypes -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("[torch.float16, torch.bfloat16, torch.float32]", "fp16, bf16, fp32"),
        ("[torch.bfloat16]", "bf16"),
        ("[torch.float8_e4m3fn]", "float8_e4m3fn"),
    ],
)
def test_dtypes(tmp_path, value, cell):
    body = f"supported_dtypes: ClassVar[list[torch.dtype]] = {value}\n"
    assert analyze_backend(tmp_path, body).cell("Dtypes") == cell


def test_kv_dtypes_from_class_var(tmp_path):
    body = 'supported_kv_cache_dtypes: ClassVar[list[str]] = ["auto", "fp8", "bfloat16"]\n'
    assert analyze_backend(tmp_path, body).cell("KV Dtypes") == "auto, fp8, bfloat16"


def test_kv_dtypes_from_method(tmp_path):
    body = method("supports_kv_cache_dtype", 'return kv_cache_dtype in ["auto", "bfloat16"]')
    assert analyze_backend(tmp_path, body).cell("KV Dtypes") == "auto, bfloat16"


def test_kv_dtypes_class_var_wins_over_method(tmp_path):
    body = 'supported_kv_cache_dtypes: ClassVar[list[str]] = ["auto", "fp8"]\n' + method(
        "supports_kv_cache_dtype", 'return kv_cache_dtype in ["auto", "bfloat16"]'
    )
    assert analyze_backend(tmp_path, body).cell("KV Dtypes") == "auto, fp8"


# -- MLA membership and flags -----------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "body"),
    [
        ({"bases": "MLACommonBackend"}, "pass\n"),
        ({"bases": "FlashMLABackend"}, "pass\n"),
        ({"module": "vllm.v1.attention.backends.mla.plain"}, "pass\n"),
        ({"name": "SOMETHING_MLA"}, "pass\n"),
        ({}, method("is_mla", "return True")),
    ],
    ids=["parent", "flashmla-parent", "module-path", "name", "is_mla"],
)
def test_mla_membership(tmp_path, kwargs, body):
    name = kwargs.get("name", "MY_ATTN")
    analysis = analyze_page(one_backend(tmp_path, body, **kwargs))
    assert row(analysis, name).table == "mla"
    assert name in {r.name for r in analysis.rows("mla")}
    assert name not in {r.name for r in analysis.rows("standard")}


def test_is_mla_returning_false_stays_standard(tmp_path):
    assert analyze_backend(tmp_path, method("is_mla", "return False")).table == "standard"


@pytest.mark.parametrize(
    ("method_name", "column"),
    [("supports_sink", "Sink"), ("supports_mm_prefix", "MM Prefix"), ("is_sparse", "Sparse")],
)
def test_flags(tmp_path, method_name, column):
    yes = analyze_backend(tmp_path / "yes", method(method_name, "return True"))
    no = analyze_backend(tmp_path / "no", method(method_name, "return False"))
    assert (yes.cell(column), no.cell(column)) == ("✅", "❌")


def test_flag_true_on_some_path(tmp_path):
    body = method("supports_sink", "if x:\n        return True\n    return False")
    assert analyze_backend(tmp_path, body).cell("Sink") == "✅"


# -- variants ---------------------------------------------------------------
def test_flash_attn_fa2_fa3_expansion(tmp_path):
    analysis = analyze_page(build_tree(tmp_path))
    fa2, fa3 = rows(analysis, "FLASH_ATTN")
    assert (fa2.version, fa3.version) == ("FA2*", "FA3*")
    assert fa2.cell("Compute Cap.") == "≥8.0"
    assert fa3.cell("Compute Cap.") == "9.x"
    assert fa2.cell("KV Dtypes") == "auto"
    assert fa3.cell("KV Dtypes") == "auto, fp8, fp8_e4m3, fp8_e5m2"
    assert (fa2.cell("Sink"), fa3.cell("Sink")) == ("❌", "✅")
    assert fa2.cell("Head Sizes") == fa3.cell("Head Sizes") == "64, 128, 256"


def test_fa3_capability_follows_fa_utils(tmp_path):
    fa = dedent("""
        def get_flash_attn_version():
            return 3 if (cap.major == 8 and ok()) else 2
        def flash_attn_supports_fp8():
            return False
        def flash_attn_supports_sinks():
            return False
    """)
    analysis = analyze_page(build_tree(tmp_path, {FA_UTILS: fa}))
    fa2, fa3 = rows(analysis, "FLASH_ATTN")
    assert fa3.cell("Compute Cap.") == "8.x"
    assert fa3.cell("KV Dtypes") == fa2.cell("KV Dtypes") == "auto"
    assert fa3.cell("Sink") == "❌"


def test_flashinfer_native_trtllm_expansion(tmp_path):
    analysis = analyze_page(build_tree(tmp_path))
    native, trtllm = rows(analysis, "FLASHINFER")
    assert (native.version, trtllm.version) == ("Native†", "TRTLLM†")
    assert native.cell("Compute Cap.") == "7.x-9.x"
    assert trtllm.cell("Compute Cap.") == "10.x"
    assert (native.cell("Sink"), trtllm.cell("Sink")) == ("❌", "✅")
    assert native.cell("KV Dtypes") == trtllm.cell("KV Dtypes") == "auto, fp8, fp8_e5m2"


def test_no_variant_files_no_split_no_version_column(tmp_path):
    analysis = analyze_page(build_tree(tmp_path, {FA_UTILS: None, FLASHINFER_UTILS: None}))
    assert [r.version for r in rows(analysis, "FLASH_ATTN")] == [""]
    assert [r.version for r in rows(analysis, "FLASHINFER")] == [""]
    page = render_markdown(analysis)
    standard = page.split("## Standard Attention (MHA, MQA, GQA) Backends")[1].split("## MLA")[0]
    assert "| Version |" not in standard
    assert "| Backend | Dtypes | KV Dtypes |" in standard
    assert "**†**" not in page and "**\\***" not in page


def test_version_column_with_variants(tmp_path):
    page = render_markdown(analyze_page(build_tree(tmp_path)))
    assert "| Backend | Version | Dtypes |" in page
    assert "| `TRITON_ATTN` |  | fp16, bf16, fp32 |" in page
    assert "> **†** FlashInfer uses TRTLLM" in page
    assert "> **\\*** Specify the FlashAttention version" in page
    assert page.index("**†**") < page.index("**\\***")


def test_rows_sorted_by_name_with_variants_together(tmp_path):
    analysis = analyze_page(build_tree(tmp_path))
    names = [(r.name, r.version) for r in analysis.rows("standard")]
    assert names == [
        ("CPU_ATTN", ""),
        ("FLASHINFER", "Native†"),
        ("FLASHINFER", "TRTLLM†"),
        ("FLASH_ATTN", "FA2*"),
        ("FLASH_ATTN", "FA3*"),
        ("TRITON_ATTN", ""),
    ]
    assert "TORCH_SDPA" not in {r.name for r in analysis.backends}


# -- priorities -------------------------------------------------------------
def priorities(tmp_path, source: str) -> dict[tuple[str, str], tuple[str, ...]]:
    """The literal lists by the conditions that guard them (the runtime profile's
    fallback when the priority function cannot be evaluated)."""
    tree = SourceTree(build_tree(tmp_path, {CUDA: dedent(source)}))
    return {(p.category, p.arch): tuple(p.backends) for p in read_priorities(tree)}


def page_lists(tmp_path, source: str) -> dict[tuple[str, str], tuple[str, ...]]:
    """The lists the vllm-page profile shows: those vLLM's own generator finds."""
    analysis = analyze_page(build_tree(tmp_path, {CUDA: dedent(source)}))
    return {(p.category, p.arch): tuple(p.backends) for p in analysis.priorities}


ELIF = """
    def _get_backend_priorities(use_mla, device_capability):
        if use_mla:
            if device_capability.major == 10:
                return [AttentionBackendEnum.M_SM100]
            elif device_capability.major == 12:
                return [AttentionBackendEnum.M_SM120]
            else:
                return [AttentionBackendEnum.M_DEFAULT]
        else:
            if device_capability.major == 10:
                return [AttentionBackendEnum.S_SM100]
            else:
                return [AttentionBackendEnum.S_DEFAULT]
"""


def test_page_lists_stop_at_an_elif_as_vllms_generator_does(tmp_path):
    # vLLM's page from 0.24 on has no MLA list for Ampere/Hopper: its generator
    # reads one level of if/else, and the default list sits behind an elif
    assert page_lists(tmp_path / "page", ELIF) == {
        ("standard", "sm100"): ("S_SM100",),
        ("standard", "default"): ("S_DEFAULT",),
        ("mla", "sm100"): ("M_SM100",),
    }
    assert priorities(tmp_path / "literal", ELIF)[("mla", "default")] == ("M_DEFAULT",)


def test_page_lists_read_only_the_ifs_of_the_function(tmp_path):
    source = """
        def _get_backend_priorities(use_mla, device_capability):
            if use_mla:
                return [AttentionBackendEnum.M_DEFAULT]
            if device_capability.major == 10:
                return [AttentionBackendEnum.S_SM100]
            return [AttentionBackendEnum.S_DEFAULT]
    """
    assert page_lists(tmp_path, source) == {
        ("standard", "sm100"): ("S_SM100",),
        ("mla", "default"): ("M_DEFAULT",),
    }


def test_priority_lists_seed_layout(tmp_path):
    analysis = analyze_page(build_tree(tmp_path))
    found = {(p.category, p.arch): tuple(p.backends) for p in analysis.priorities}
    assert found == {
        ("standard", "sm100"): ("FLASHINFER", "FLASH_ATTN", "TRITON_ATTN"),
        ("standard", "default"): ("FLASH_ATTN", "FLASHINFER", "TRITON_ATTN"),
        ("mla", "sm100"): ("TRITON_MLA",),
        ("mla", "default"): ("TRITON_MLA",),
    }
    order = [(p.category, p.arch) for p in analysis.priorities]
    assert order == [
        ("standard", "sm100"),
        ("standard", "default"),
        ("mla", "sm100"),
        ("mla", "default"),
    ]


SWAPPED = """
    def _get_backend_priorities(use_mla, device_capability):
        if use_mla:
            if device_capability.major != 10:
                return [AttentionBackendEnum.M_DEFAULT]
            else:
                return [AttentionBackendEnum.M_SM100]
        else:
            if device_capability.major == 10:
                return [AttentionBackendEnum.S_SM100]
            return [AttentionBackendEnum.S_DEFAULT]
"""

ELSE_FIRST = """
    def _get_backend_priorities(use_mla, device_capability):
        if use_mla:
            if device_capability.major == 10:
                return [AttentionBackendEnum.M_SM100]
            return [AttentionBackendEnum.M_DEFAULT]
        if not device_capability.major == 10:
            return [AttentionBackendEnum.S_DEFAULT]
        return [AttentionBackendEnum.S_SM100]
"""

EXPECTED_SWAPPED = {
    ("standard", "sm100"): ("S_SM100",),
    ("standard", "default"): ("S_DEFAULT",),
    ("mla", "sm100"): ("M_SM100",),
    ("mla", "default"): ("M_DEFAULT",),
}


def test_priority_fallthrough_returns(tmp_path):
    source = """
        def _get_backend_priorities(use_mla, device_capability):
            if use_mla:
                if device_capability.major == 10:
                    return [AttentionBackendEnum.M_SM100]
                return [AttentionBackendEnum.M_DEFAULT]
            if device_capability.major == 10:
                return [AttentionBackendEnum.S_SM100]
            return [AttentionBackendEnum.S_DEFAULT]
    """
    assert priorities(tmp_path, source) == EXPECTED_SWAPPED


@pytest.mark.parametrize("source", [SWAPPED, ELSE_FIRST], ids=["not-equal", "not-eq"])
def test_priority_negated_guards(tmp_path, source):
    assert priorities(tmp_path, source) == EXPECTED_SWAPPED


def test_priority_not_use_mla_first(tmp_path):
    source = """
        def _get_backend_priorities(use_mla, device_capability):
            if not use_mla:
                if device_capability.major == 10:
                    return [AttentionBackendEnum.S_SM100]
                return [AttentionBackendEnum.S_DEFAULT]
            if device_capability.major == 10:
                return [AttentionBackendEnum.M_SM100]
            return [AttentionBackendEnum.M_DEFAULT]
    """
    assert priorities(tmp_path, source) == EXPECTED_SWAPPED


def test_priority_family_check(tmp_path):
    source = """
        def _get_backend_priorities(use_mla, device_capability):
            if use_mla:
                return [AttentionBackendEnum.M_DEFAULT]
            if device_capability.is_device_capability_family(100):
                return [AttentionBackendEnum.S_SM100]
            return [AttentionBackendEnum.S_DEFAULT]
    """
    assert priorities(tmp_path, source) == {
        ("standard", "sm100"): ("S_SM100",),
        ("standard", "default"): ("S_DEFAULT",),
        ("mla", "default"): ("M_DEFAULT",),
    }
