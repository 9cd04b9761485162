"""The runtime profile end to end: a row joins the evaluator's answers over the
capability grid; a question the release does not declare, or the page does not
show, is not asked; a backend class built by a call still gets a row."""

from __future__ import annotations

import json

from runtime_trees import (
    BACKEND_INTERFACE,
    FILE,
    RUNTIME_FILES,
    only,
    runtime_backend,
    runtime_tree,
)
from treebuilder import DEFAULT_ENTRIES, REGISTRY, dedent, registry_source

from sphinxext_attn.analysis.pipeline import analyze

BY_GPU = """
@classmethod
def get_supported_head_sizes(cls):
    if current_platform.is_device_capability_family(100):
        return [64, 128, 256]
    return [64, 128]

@classmethod
def supports_compute_capability(cls, capability):
    return capability.major == 12 or capability == DeviceCapability(9, 0)

@classmethod
def supports_kv_cache_dtype(cls, kv_cache_dtype):
    return kv_cache_dtype in ("auto", "fp8") and current_platform.has_device_capability(89)

@classmethod
def supports_attn_type(cls, attn_type):
    return attn_type in (AttentionType.DECODER, AttentionType.ENCODER_ONLY)

@classmethod
def supports_alibi_sqrt(cls):
    return True

@staticmethod
def get_supported_kernel_block_sizes():
    return [MultipleOf(16), 32]
"""


def test_rows_join_answers_over_the_capability_grid(tmp_path):
    iface = RUNTIME_FILES[BACKEND_INTERFACE]
    iface += "\n    @classmethod\n    def supports_alibi_sqrt(cls):\n        return False\n"
    header = "from vllm.platforms import current_platform\n"
    runtime_backend(tmp_path, BY_GPU, header=header, extra={BACKEND_INTERFACE: iface})
    analysis = analyze(tmp_path)
    row = only(analysis, "MY_ATTN")
    assert row.unknown == {}
    assert row.supports["head_sizes"] == [64, 128, 256]  # 256 only on the 10.x family
    assert row.supports["compute_capabilities"] == ["9.0", "12.0", "12.1"]
    assert row.supports["block_sizes"] == ["%16"]  # 32 is a multiple of 16: the same set
    # the cell is the declared list (the interface's); the check, which the selection
    # asks, accepts fp8 from SM 8.9 on: the note says so
    assert set(row.kv_cache_dtypes) == {"auto", "bfloat16"}
    assert row.notes == {
        "KV Dtypes": "supports_kv_cache_dtype(), which vLLM's selection asks, accepts auto, "
        "fp8 instead (on some GPUs)"
    }
    assert row.attn_types == "Decoder, Encoder Only"
    assert row.extras == {"supports_alibi_sqrt": True}
    assert only(analysis, "TRITON_ATTN").extras == {"supports_alibi_sqrt": False}
    assert not [d for d in analysis.diagnostics if d.location and d.location.path == FILE]


def test_a_markdown_page_asks_only_its_own_columns(tmp_path, capsys):
    """The command line's markdown page has vLLM's page columns only, so a capability
    outside them is not asked (a hostile body there costs nothing); JSON asks it."""
    from sphinxext_attn.cli.main import main

    iface = RUNTIME_FILES[BACKEND_INTERFACE]
    iface += "\n    @classmethod\n    def supports_alibi_sqrt(cls):\n        return False\n"
    body = "@classmethod\ndef supports_alibi_sqrt(cls):\n    while True:\n        pass\n"
    runtime_backend(tmp_path, body, extra={BACKEND_INTERFACE: iface})
    base = ["--root", str(tmp_path), "--no-cache", "-o", "-"]
    assert main(base) == 0
    page = capsys.readouterr()
    assert "MY_ATTN" in page.out
    assert "supports_alibi_sqrt" not in page.err
    assert main([*base, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rows = [r for r in data["backends"] if r["name"] == "MY_ATTN"]
    assert rows and "supports_alibi_sqrt" in rows[0]["unknown"]
    assert rows[0]["extras"]["supports_alibi_sqrt"] is None


def test_a_question_the_release_does_not_have_is_not_an_unknown(tmp_path):
    """A flag the release's backend interface does not declare (supports_non_causal
    before vLLM had it) is a question that release never asks: no unknown cell and
    no note for each backend. One the interface declares but a class's body fails
    on is still unknown, with the exception."""
    iface = RUNTIME_FILES[BACKEND_INTERFACE].replace(
        "    @classmethod\n    def supports_non_causal(cls):\n        return False\n", ""
    )
    assert "supports_non_causal" not in iface
    body = "@classmethod\ndef supports_sink(cls):\n    return cls.no_such_member\n"
    runtime_backend(tmp_path, body, extra={BACKEND_INTERFACE: iface})
    analysis = analyze(tmp_path)
    for name in ("MY_ATTN", "TRITON_ATTN"):
        assert "Non-Causal" not in only(analysis, name).unknown
    assert "AttributeError" in only(analysis, "MY_ATTN").unknown["Sink"]
    assert not [d for d in analysis.diagnostics if "supports_non_causal" in d.message]


COMPOSITE = """
from vllm.v1.attention.backend import AttentionBackend
from vllm.v1.attention.backends.triton_attn import TritonAttentionBackend


def create_composite_backend(general, causal, *, head_sizes=()):
    class CompositeBackend(general):
        @classmethod
        def get_supported_head_sizes(cls):
            return list(head_sizes)

        @classmethod
        def supports_sink(cls):
            return causal.supports_sink()

    return CompositeBackend


class Causal(AttentionBackend):
    @classmethod
    def supports_sink(cls):
        return True


MixedBackend = create_composite_backend(TritonAttentionBackend, Causal, head_sizes=(80, 112))
"""


def test_a_backend_built_by_a_call_gets_a_row(tmp_path):
    module = "vllm/v1/attention/backends/composite.py"
    path = "vllm.v1.attention.backends.composite.MixedBackend"
    entries = {**DEFAULT_ENTRIES, "MIXED": path}
    runtime_tree(tmp_path, {module: dedent(COMPOSITE), REGISTRY: registry_source(entries)})
    analysis = analyze(tmp_path)
    row = only(analysis, "MIXED")
    assert row.supports["head_sizes"] == [80, 112]
    assert row.supports_sink is True
    assert row.dtypes == ("fp16", "bf16", "fp32")  # TritonAttentionBackend's, inherited
    # at most a note that the class is built at run time, never a warning
    assert not [d for d in analysis.diagnostics if "MixedBackend" in d.message and not d.release]
    assert "MIXED" not in {r.name for r in analyze(tmp_path, profile="vllm-page").backends}


def test_every_known_attention_type_and_one_more_is_all(tmp_path):
    """A release whose ``AttentionType`` has a member the tables do not name yet:
    a backend accepting every type still reads "All", not each name."""
    iface = RUNTIME_FILES[BACKEND_INTERFACE].replace(
        '    ENCODER_DECODER = "encoder_decoder"\n',
        '    ENCODER_DECODER = "encoder_decoder"\n    CROSS_NEW = "cross_new"\n',
    )
    body = "@classmethod\ndef supports_attn_type(cls, attn_type):\n    return True\n"
    runtime_backend(tmp_path, body, extra={BACKEND_INTERFACE: iface})
    assert only(analyze(tmp_path), "MY_ATTN").attn_types == "All"


def test_a_flag_after_one_the_release_does_not_have_is_still_asked(tmp_path):
    """supports_non_causal missing from the interface skips that one question only:
    DCP, asked after it, is still the class's answer."""
    iface = RUNTIME_FILES[BACKEND_INTERFACE].replace(
        "    @classmethod\n    def supports_non_causal(cls):\n        return False\n", ""
    )
    body = "@classmethod\ndef supports_dcp(cls):\n    return True\n"
    runtime_backend(tmp_path, body, extra={BACKEND_INTERFACE: iface})
    row = only(analyze(tmp_path), "MY_ATTN")
    assert row.supports_dcp is True
    assert "DCP" not in row.unknown
