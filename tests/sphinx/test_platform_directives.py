"""``:platform:`` on the priority and select directives, and
``attention_backends_platform``: another platform's selection from its own code
(the demo tree's invented ROCm, XPU and CPU platforms). One build per setting:
a build analyses the tree first."""

from __future__ import annotations

from pathlib import Path

from attn_sphinx_util import build, warnings
from treebuilder import DEMO_TREE

PAGE = """Platforms
=========

All ROCm lists
--------------

.. attention-backends-priority::
   :platform: rocm

One GPU
-------

.. attention-backends-priority::
   :platform: rocm
   :arch: gfx1100

XPU rules
---------

.. attention-backends-priority::
   :platform: xpu

A ROCm decision
---------------

.. attention-backends-select::
   :platform: rocm
   :arch: gfx942
   :head-size: 128
   :env: VLLM_ROCM_USE_AITER=1
   :assume: installed.aiter=true
"""


def _text(make_app, tmp_path: Path, page: str, **kwargs) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["sphinxext_attn"]\n')
    (src / "index.rst").write_text(page)
    app = build(make_app, src, "text", tree=DEMO_TREE, profile=None, **kwargs)
    text = (Path(app.outdir) / "index.txt").read_text(encoding="utf-8")
    return " ".join(text.split()), warnings(app)


def test_platform_lists_rules_and_decisions(make_app, tmp_path):
    text, warned = _text(make_app, tmp_path, PAGE)
    assert not warned
    every, one, xpu, decision = (
        text.split(heading, 1)[1]
        for heading in ("All ROCm lists", "One GPU", "XPU rules", "A ROCm decision")
    )
    every = every.split("One GPU")[0]
    assert "gfx90a, gfx942, gfx950: aiter installed, without a KV connector," in every
    assert "gfx1100, gfx1201: without a KV connector" in every
    assert "GPUs" in every
    one = one.split("XPU rules")[0]
    assert "gfx1100: without a KV connector" in one and "gfx942" not in one
    xpu = xpu.split("A ROCm decision")[0]
    assert all(word in xpu for word in ('"use_sparse"', '"FLASH_ATTN"', '"otherwise"'))
    assert "ROCm gfx942" in decision and 'vLLM picks "ROCM_ATTN"' in decision
    assert "VLLM_ROCM_USE_AITER=1" in decision


def test_conf_platform_is_the_default_and_a_bad_one_is_named(make_app, tmp_path):
    page = (
        ".. attention-backends-select::\n   :sparse:\n\n"
        ".. attention-backends-select::\n   :platform: metal\n"
    )
    text, warned = _text(
        make_app, tmp_path, page, confoverrides={"attention_backends_platform": "xpu"}
    )
    assert "vLLM raises NotImplementedError: Sparse attention is not supported on XPU." in text
    assert "give one of cuda, rocm, xpu, cpu, tpu" in warned


FEATURES_PAGE = """Platforms
=========

ROCm tables
-----------

.. attention-backends::
   :platform: rocm

XPU standard
------------

.. attention-backends-standard::
   :platform: xpu
"""


def test_feature_tables_show_what_the_platform_reaches_in_its_terms(make_app, tmp_path):
    text, warned = _text(make_app, tmp_path, FEATURES_PAGE)
    assert not warned
    rocm, xpu = text.split("ROCm tables", 1)[1].split("XPU standard")
    assert "Backend Selection (ROCm)" in rocm and "gfx1100, gfx1201:" in rocm
    assert "Standard Attention (MHA, MQA, GQA) Backends (ROCm)" in rocm
    assert "MLA Decode Backends (ROCm)" in rocm and "TRITON_MLA" in rocm
    assert "GPUs" in rocm and "Compute Cap." not in rocm
    assert "ROCM_ATTN" in rocm and "CPU_ATTN" not in rocm
    assert "Compute Cap." in xpu and "N/A" in xpu
    assert "ROCM_ATTN" not in xpu and "TRITON_ATTN" in xpu and "FLASH_ATTN" in xpu


def test_another_platform_runs_no_cuda_analysis(make_app, tmp_path, monkeypatch):
    """A page of other platforms' lists, rules, tables and decisions: only their own
    evaluation runs (the CUDA analysis of the tree is never asked)."""
    import sphinxext_attn.analysis as analysis

    real = analysis.analyze

    def refuse(key, **kwargs):  # type: ignore[no-untyped-def]
        if not key.is_platform_part:
            raise AssertionError("the CUDA analysis ran for a page showing another platform")
        return real(key, **kwargs)

    monkeypatch.setattr(analysis, "analyze", refuse)
    text, warned = _text(make_app, tmp_path, PAGE + FEATURES_PAGE.split("=========", 1)[1])
    assert not warned
    assert "gfx1100: without a KV connector" in text and "ROCm gfx942" in text


def test_a_table_the_platform_reaches_no_backend_of_says_so(make_app, tmp_path):
    page = ".. attention-backends-mla-decode::\n   :platform: cpu\n"
    text, warned = _text(make_app, tmp_path, page)
    assert not warned
    assert text.strip() == "CPU's selection reaches no backend here."


def test_tables_of_cuda_alone_stay_cuda_whatever_the_platform(make_app, tmp_path, monkeypatch):
    """With ``attention_backends_platform = "rocm"``, the legend and the prefill table
    (nothing of ROCm in them) come from the CUDA analysis, evaluated on CUDA."""
    import sphinxext_attn.analysis as analysis

    real = analysis.analyze
    platforms: list[str] = []

    def recording(*args, **kwargs):  # type: ignore[no-untyped-def]
        key = args[0]
        platforms.append(key.environment.platform)
        return real(*args, **kwargs)

    monkeypatch.setattr(analysis, "analyze", recording)
    page = ".. attention-backends-legend::\n\n.. attention-backends-mla-prefill::\n"
    text, warned = _text(
        make_app, tmp_path, page, confoverrides={"attention_backends_platform": "rocm"}
    )
    assert not warned and "Backend" in text
    assert platforms == ["cuda"]


def test_feature_tables_reuse_the_lists_the_page_explored(make_app, tmp_path, monkeypatch):
    """A page with ROCm's lists and its feature tables explores ROCm's machines once."""
    from sphinxext_attn.analysis import platform_part as platform_page

    real = platform_page.evaluate_selection
    calls: list[str] = []

    def counting(tree, environment):  # type: ignore[no-untyped-def]
        calls.append(environment.platform)
        return real(tree, environment)

    monkeypatch.setattr(platform_page, "evaluate_selection", counting)
    page = (
        ".. attention-backends-priority::\n   :platform: rocm\n\n"
        ".. attention-backends-standard::\n   :platform: rocm\n\n"
        ".. attention-backends-mla-decode::\n   :platform: rocm\n"
    )
    text, warned = _text(make_app, tmp_path, page)
    assert not warned and "GPUs" in text
    assert calls == ["rocm"]


def test_a_cuda_page_evaluates_no_other_platform(make_app, tmp_path, monkeypatch):
    from sphinxext_attn.analysis import platform_part as platform_page

    def refuse(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("another platform was evaluated for a CUDA-only page")

    monkeypatch.setattr(platform_page, "platform_analysis", refuse)
    monkeypatch.setattr(platform_page, "evaluate_selection", refuse)
    page = ".. attention-backends::\n\n.. attention-backends-select::\n   :head-size: 128\n"
    text, warned = _text(make_app, tmp_path, page)
    assert not warned and "FLASH_ATTN" in text
