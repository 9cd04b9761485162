"""The columns vLLM's page grew after the seed (DCP from 0.17, Non-Causal from 0.21),
on small invented trees: which columns a release shows, and how each cell is read."""

from __future__ import annotations

import json

from runtime_trees import BACKEND_INTERFACE, runtime_backend
from treebuilder import (
    BACKENDS,
    DEFAULT_ENTRIES,
    FA_UTILS,
    REGISTRY,
    analyze_page,
    backend_source,
    build_tree,
    dedent,
    one_backend,
    registry_source,
    row,
)

from sphinxext_attn.analysis.pipeline import analyze as analyze_any
from sphinxext_attn.render.jsonout import to_data
from sphinxext_attn.render.markdown import render_markdown
from sphinxext_attn.vocab.paths import GENERATORS

OLD_GENERATOR, NEW_GENERATOR = GENERATORS

#: A generator in the shape of vLLM 0.21's: column specs as (header, lambda) pairs.
GENERATOR_0_21 = """
_COL_SINK = ("Sink", lambda b: b["supports_sink"])
_COL_NON_CAUSAL = ("Non-Causal", lambda b: b["supports_non_causal"])
_COL_DCP = ("DCP", lambda b: b["supports_dcp"])
"""
#: vLLM 0.17's: DCP only, and its legend row.
GENERATOR_0_17 = '''
_COL_DCP = ("DCP", lambda b: b["supports_dcp"])
LEGEND = """| **DCP** | Decode Context Parallelism support |"""
'''
#: The seed's shape: a literal header, no DCP or Non-Causal anywhere.
GENERATOR_0_16 = """
HEADER = "| Backend | Dtypes | KV Dtypes | Sink | MM Prefix | Attention Types |"
"""

IMPL_TRUE = """
class MyImpl:
    can_return_lse_for_decode: bool = True
"""


def _dcp_backend(tmp_path, module_text, extra=None):
    """Backend ``MY_ATTN`` whose module is ``module_text`` (class ``MyBackend``)."""
    entries = dict(DEFAULT_ENTRIES, MY_ATTN="vllm.v1.attention.backends.my_attn.MyBackend")
    files = {REGISTRY: registry_source(entries), f"{BACKENDS}/my_attn.py": dedent(module_text)}
    files.update(extra or {})
    return row(analyze_page(build_tree(tmp_path, files)), "MY_ATTN")


BACKEND_WITH_IMPL = """
from vllm.v1.attention.backend import AttentionBackend
{imports}

{impl}

class MyBackend(AttentionBackend):
    @staticmethod
    def get_impl_cls():
        return MyImpl
"""


def test_dcp_read_from_the_impl_class_in_the_same_file(tmp_path):
    found = _dcp_backend(tmp_path, BACKEND_WITH_IMPL.format(imports="", impl=dedent(IMPL_TRUE)))
    assert found.supports_dcp is True
    where = found.sources["DCP"]
    lines = (tmp_path / f"{BACKENDS}/my_attn.py").read_text().splitlines()
    assert where.path.endswith("my_attn.py") and "can_return" in lines[where.line - 1]


def test_dcp_follows_bases_in_the_file_and_across_imports(tmp_path):
    impl = "class Mid(CommonImpl):\n    pass\n\nclass MyImpl(Mid[int]):\n    x = 1\n"
    common = "class CommonImpl:\n    can_return_lse_for_decode = True\n"
    found = _dcp_backend(
        tmp_path / "rel",
        BACKEND_WITH_IMPL.format(imports="from .common import CommonImpl", impl=impl),
        {f"{BACKENDS}/common.py": common},
    )
    assert found.supports_dcp is True
    found = _dcp_backend(
        tmp_path / "abs",
        BACKEND_WITH_IMPL.format(
            imports="from vllm.v1.attention.backends.common import CommonImpl", impl=impl
        ),
        {f"{BACKENDS}/common.py": common},
    )
    assert found.supports_dcp is True


def test_dcp_nearest_literal_wins_and_defaults_to_false(tmp_path):
    impl = "class Base:\n    can_return_lse_for_decode = True\n\nclass MyImpl(Base):\n"
    impl += "    can_return_lse_for_decode: bool = False\n"
    found = _dcp_backend(tmp_path / "a", BACKEND_WITH_IMPL.format(imports="", impl=impl))
    assert found.supports_dcp is False
    # a value that is not a literal bool is not read: the base's answer stands
    impl = "class Base:\n    can_return_lse_for_decode = True\n\nclass MyImpl(Base):\n"
    impl += "    can_return_lse_for_decode = FLAG\n"
    found = _dcp_backend(tmp_path / "b", BACKEND_WITH_IMPL.format(imports="", impl=impl))
    assert found.supports_dcp is True


def test_dcp_false_when_the_generator_cannot_see_the_impl(tmp_path):
    # the impl imported from elsewhere (vLLM's generator looks in the backend's file only)
    found = _dcp_backend(
        tmp_path / "imported",
        BACKEND_WITH_IMPL.format(imports="from .impls import MyImpl", impl=""),
        {f"{BACKENDS}/impls.py": dedent(IMPL_TRUE)},
    )
    assert found.supports_dcp is False
    # no get_impl_cls of its own, and a base that is a module attribute
    found = _dcp_backend(
        tmp_path / "no_method",
        "import x\n\nclass MyImpl(x.Base):\n    pass\n\nclass MyBackend:\n    pass\n",
    )
    assert found.supports_dcp is False
    found = _dcp_backend(
        tmp_path / "attr_base",
        BACKEND_WITH_IMPL.format(imports="import x", impl="class MyImpl(x.Base):\n    pass\n"),
    )
    assert found.supports_dcp is False


def test_dcp_read_in_part_from_a_long_class(tmp_path):
    # a header over several lines, the attribute among other members; then one
    # written over several lines (the whole class is read instead)
    impl = (
        "class MyImpl(\n    Base,\n):\n    x = 1\n\n    def f(self):\n"
        "        can_return_lse_for_decode = False\n\n"
        "    can_return_lse_for_decode: bool = True\n"
    )
    module = BACKEND_WITH_IMPL.format(imports="", impl="class Base:\n    pass\n\n" + impl)
    found = _dcp_backend(tmp_path / "a", module)
    lines = (tmp_path / "a" / f"{BACKENDS}/my_attn.py").read_text().splitlines()
    assert found.supports_dcp is True
    assert lines[found.sources["DCP"].line - 1].strip().startswith("can_return_lse_for_decode: b")
    split = module.replace("bool = True", "bool = (\n        True\n    )")
    assert _dcp_backend(tmp_path / "b", split).supports_dcp is True


def test_cyclic_bases_end(tmp_path):
    impl = "class A(MyImpl):\n    pass\n\nclass MyImpl(A):\n    pass\n"
    found = _dcp_backend(tmp_path, BACKEND_WITH_IMPL.format(imports="", impl=impl))
    assert found.supports_dcp is False


def test_non_causal_is_the_seed_flag_rule(tmp_path):
    body = "@classmethod\ndef supports_non_causal(cls):\n    return True\n"
    assert row(analyze_page(one_backend(tmp_path, body)), "MY_ATTN").supports_non_causal is True


def _columns(tmp_path, generator=None, path=OLD_GENERATOR, body="pass\n"):
    extra = {path: dedent(generator)} if generator is not None else {}
    return analyze_page(one_backend(tmp_path, body, extra=extra))


def test_columns_follow_the_release_generator(tmp_path):
    assert _columns(tmp_path / "a", GENERATOR_0_16).page_columns == ()
    assert _columns(tmp_path / "b", GENERATOR_0_17).page_columns == ("DCP",)
    assert _columns(tmp_path / "c", GENERATOR_0_21).page_columns == ("Non-Causal", "DCP")
    moved = _columns(tmp_path / "d", GENERATOR_0_21, path=NEW_GENERATOR)
    assert moved.page_columns == ("Non-Causal", "DCP")


def test_without_a_generator_a_column_shows_when_a_backend_claims_it(tmp_path):
    assert _columns(tmp_path / "none").page_columns == ()
    body = "@classmethod\ndef supports_non_causal(cls):\n    return True\n"
    assert _columns(tmp_path / "nc", body=body).page_columns == ("Non-Causal",)


def test_markdown_places_the_columns_as_vllm_does(tmp_path):
    body = "@classmethod\ndef supports_non_causal(cls):\n    return True\n"
    analysis = _columns(tmp_path, GENERATOR_0_21, body=body)
    page = render_markdown(analysis)
    standard = next(ln for ln in page.splitlines() if ln.startswith("| Backend | Version"))
    assert standard == (
        "| Backend | Version | Dtypes | KV Dtypes | Block Sizes | Head Sizes | Sink "
        "| Non-Causal | MM Prefix | DCP | Attention Types | Compute Cap. |"
    )
    mla = next(ln for ln in page.splitlines() if ln.startswith("| Backend | Dtypes"))
    assert "| Sink | Non-Causal | Sparse | MM Prefix | DCP | Attention Types |" in mla
    assert "| **Non-Causal** | Non-causal" in page and "| **DCP** | Decode Context" in page
    mine = next(ln for ln in page.splitlines() if ln.startswith("| `MY_ATTN`"))
    assert mine.split(" | ")[7:10] == ["✅", "❌", "❌"]  # Non-Causal, MM Prefix, DCP
    data = to_data(analysis)
    assert "DCP" in data["columns"]["standard"] and "Non-Causal" in data["columns"]["mla"]


def test_seed_page_keeps_the_seed_columns(tmp_path):
    page = render_markdown(_columns(tmp_path, GENERATOR_0_16))
    assert "DCP" not in page and "Non-Causal" not in page


def test_interface_capabilities_are_offered_and_read(tmp_path):
    interface = backend_source("AttentionBackend", "pass\n", bases="").replace("()", "")
    interface += (
        "\n    @classmethod\n    def supports_sliding_window(cls):\n        return False\n"
    )
    body = "@classmethod\ndef supports_sliding_window(cls):\n    return True\n"
    root = one_backend(tmp_path, body, extra={BACKEND_INTERFACE: interface})
    analysis = analyze_page(root)
    assert analysis.capability_columns == ("Sliding Window",)
    assert "Sliding Window" in analysis.column_choices()
    assert row(analysis, "MY_ATTN").cell("Sliding Window") == "✅"


def test_runtime_dcp_asks_the_impl_before_backends_had_the_question(tmp_path):
    header = "class MyImpl:\n    can_return_lse_for_decode = True\n"
    body = "@staticmethod\ndef get_impl_cls():\n    return MyImpl\n"
    root = runtime_backend(tmp_path, body, header=header)
    interface = (root / BACKEND_INTERFACE).read_text()
    start = interface.index("    @classmethod\n    def supports_dcp")
    end = interface.index("    @classmethod", start + 10)
    (root / BACKEND_INTERFACE).write_text(interface[:start] + interface[end:])
    found = row(analyze_any(root, profile="runtime"), "MY_ATTN")
    assert found.supports_dcp is True and "DCP" not in found.unknown
    assert json.dumps(to_data(analyze_any(root)))  # serialisable as it is


KV_BODY = """
supported_kv_cache_dtypes = [
    "auto",
    "fp8_ds_mla",
    "fp8",  # alias for fp8_ds_mla
]
"""


def test_kv_dtypes_left_out_as_the_release_generator_says(tmp_path):
    # no generator: an entry commented as an alias is shown once
    assert analyze_backend_kv(tmp_path / "none", None) == ("auto", "fp8_ds_mla")
    # the generator names what it leaves out, per backend; comments do not count then
    excludes = 'BACKEND_KV_DTYPE_EXCLUDES: dict[str, set[str]] = {"MY_ATTN": {"auto"}}\n'
    assert analyze_backend_kv(tmp_path / "dict", excludes) == ("fp8_ds_mla", "fp8")
    assert analyze_backend_kv(tmp_path / "empty", GENERATOR_0_17) == ("auto", "fp8_ds_mla", "fp8")


def analyze_backend_kv(root, generator):
    extra = {OLD_GENERATOR: dedent(generator)} if generator is not None else {}
    return row(analyze_page(one_backend(root, KV_BODY, extra=extra)), "MY_ATTN").kv_cache_dtypes


def test_selector_era_prefill_row_keeps_the_generator_words(tmp_path):
    # the page writes what that era's generator wrote whatever FA versions exist;
    # the runtime profile says which versions the tree has
    fa_utils = """
        def get_flash_attn_version(requires_alibi=False):
            if device_capability.major == 10:
                return 4
            return 3 if device_capability.major == 9 else 2
    """
    root = build_tree(tmp_path, {FA_UTILS: dedent(fa_utils)})
    page = {p.name: p for p in analyze_page(root).mla_prefill}["FlashAttention"]
    assert page.description == "FlashAttention varlen (FA2/FA3)"
    assert page.notes == "FA3 on SM90, FA2 otherwise"
    runtime = {p.name: p for p in analyze_any(root).mla_prefill}["FlashAttention"]
    assert "FA4" in runtime.description
