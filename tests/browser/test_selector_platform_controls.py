"""The selector's platform, GPU and environment controls, in a browser (issues 23 and 27).

A page offering every platform (``:platforms: cuda, rocm, xpu, cpu``): the reader
switches platform, ROCm GPU and environment variables, and the decision shown is
the one ``select`` gives on a machine set so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import vllm_trees
from attn_browser_site import build_site, open_page

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.environment import Environment
from sphinxext_attn.model.selection import Config
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.source.tree import SourceTree

pytestmark = [pytest.mark.browser, pytest.mark.realtree]

PAGE = """\
Every platform
==============

.. attention-backends-selector::
   :platforms: cuda, rocm, xpu, cpu
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("platforms")
    return build_site("alabaster", vllm_trees.tree("0.33.0"), folder, PAGE)


SHOWN = """(() => {
  const box = document.querySelector('.attn-selector');
  const text = sel => Array.from(box.querySelectorAll(sel)).map(e => e.textContent);
  const hidden = n => { const c = box.querySelector('[name="' + n + '"]');
                        return !c || c.closest('.attn-selector-field').hidden; };
  return {selected: text('.attn-selected'), conditional: text('.attn-conditional'),
          candidates: text('.attn-candidate > code'), notices: text('.attn-selector-notice'),
          result: text('.attn-selector-result'), steps: text('.attn-selector-list > li > code'),
          facts: Array.from(box.querySelectorAll('[data-fact]')).map(e => e.name),
          assuming: text('.attn-selector-assuming'), problems: text('.attn-selector-problem'),
          capabilityHidden: hidden('capability'), archHidden: hidden('arch'),
          connectorHidden: box.querySelector('[name="use_kv_connector"]')
                             .closest('.attn-selector-flag').hidden};
})()"""


def _choose(page: Any, name: str, value: str) -> dict[str, Any]:
    page.select_option(f'.attn-selector [name="{name}"]', value)
    shown: dict[str, Any] = page.evaluate(SHOWN)
    return shown


def _select(platform: str, arch: str, config: Config, env: dict[str, str], assume: dict[str, str]):  # type: ignore[no-untyped-def]
    tree = SourceTree(str(vllm_trees.tree("0.33.0")))
    machine = Machine(Environment(env, {}, assume, platform, arch))
    return Selector(Interpreter(tree, machine)).decide(config)


def test_switching_platform_arch_and_environment(browser: Any, site: Path) -> None:
    page = open_page(
        browser, site, 1280, "light", "?capability=10.0&head_size=64&has_sink=true&dtype=bf16"
    )
    try:
        shown = page.evaluate(SHOWN)
        sink = Config(capability="10.0", dtype="bf16", head_size=64, has_sink=True)
        assert shown["selected"] == [_select("cuda", "", sink, {}, {}).selected] == ["FLASH_ATTN"]
        assert not shown["capabilityHidden"] and shown["archHidden"]
        assert "VLLM_HAS_FLASHINFER_CUBIN" in shown["facts"]
        assert any("VLLM_HAS_FLASHINFER_CUBIN=unset" in a for a in shown["assuming"])
        assert shown["problems"] == []  # XPU too: its MLA check is a setting of its own
        # the cubins present: FlashInfer takes sinks on SM 10.x (vllm#40153)
        shown = _choose(page, "VLLM_HAS_FLASHINFER_CUBIN", "1")
        cubin = _select("cuda", "", sink, {"VLLM_HAS_FLASHINFER_CUBIN": "1"}, {})
        assert shown["selected"] == [cubin.selected] == ["FLASHINFER"]

        # ROCm on an MI300X: aiter's presence nobody set, the list depends on it
        page.uncheck('.attn-selector [name="has_sink"]')
        page.fill('.attn-selector [name="head_size"]', "128")  # read at the next change
        shown = _choose(page, "platform", "rocm")
        shown = _choose(page, "arch", "gfx942")
        assert shown["capabilityHidden"] and not shown["archHidden"]
        plain = Config(dtype="bf16", head_size=128)
        truth = _select("rocm", "gfx942", plain, {}, {})
        assert shown["selected"] == [truth.selected] == ["ROCM_ATTN"], shown
        assert "from a list that depends on a fact" in shown["result"][0]
        assert shown["candidates"] == [c["backend"] for c in truth.candidates]
        # vllm#46596: AITER switched on and aiter installed, ROCM_ATTN still comes first
        _choose(page, "VLLM_ROCM_USE_AITER", "1")
        shown = _choose(page, "installed.aiter", "true")
        env, assume = {"VLLM_ROCM_USE_AITER": "1"}, {"installed.aiter": "true"}
        truth = _select("rocm", "gfx942", plain, env, assume)
        assert shown["selected"] == [truth.selected]
        assert shown["steps"] == truth.priorities[: len(shown["steps"])]
        assert "ROCM_AITER_FA" in shown["steps"]
        # the AITER switch turned off again: the MHA switch it made the code read goes
        shown = _choose(page, "VLLM_ROCM_USE_AITER", "unset")
        assert "ROCM_AITER_FA" not in shown["steps"]

        # CPU with MLA: the rules ask the CPU's AMX tiles, which nobody set
        shown = _choose(page, "platform", "cpu")
        page.check('.attn-selector [name="use_mla"]')
        shown = page.evaluate(SHOWN)
        mla = Config(dtype="bf16", head_size=128, use_mla=True)
        truth = _select("cpu", "", mla, {}, {})
        assert truth.selected is None and shown["conditional"] == ["conditional"]
        assert shown["candidates"] == [c["backend"] for c in truth.candidates]
        amx = "torch.cpu._is_amx_tile_supported"
        shown = _choose(page, amx, "false")
        truth = _select("cpu", "", mla, {}, {amx: "false"})
        if truth.raised:
            assert shown["selected"] == ["none"] and truth.raised in shown["result"][0]
        else:
            assert shown["selected"] == [truth.selected]
    finally:
        page.context.close()


XPU_CASES = [
    # FlashAttention MLA's own check accepts; a 16-token block it refuses; sparse; a
    # multimodal prefix-LM layer with the composite's head size; float32
    (Config(dtype="bf16", head_size=576, use_mla=True), "FLASH_ATTN_MLA"),
    (Config(dtype="bf16", head_size=576, block_size=16, use_mla=True), "TRITON_MLA"),
    (Config(dtype="fp16", head_size=576, use_mla=True, use_sparse=True), "XPU_MLA_SPARSE"),
    (Config(dtype="bf16", head_size=256, use_mm_prefix=True), "TRITON_FLASH_ATTN"),
    (Config(dtype="fp32", head_size=128), "TRITON_ATTN"),
]


@pytest.mark.parametrize(("config", "expected"), XPU_CASES, ids=[e for _, e in XPU_CASES])
def test_xpu_decisions_are_selects(
    browser: Any, site: Path, config: Config, expected: str
) -> None:
    truth = _select("xpu", "", config, {}, {})
    flags = ("use_mla", "use_sparse", "has_sink", "use_mm_prefix", "use_non_causal")
    values = {
        "platform": "xpu",
        "dtype": config.dtype,
        "head_size": str(config.head_size),
        "block_size": str(config.block_size or ""),
        **{flag: "true" if getattr(config, flag) else "false" for flag in flags},
    }
    query = "?" + "&".join(f"{k}={v}" for k, v in values.items())
    page = open_page(browser, site, 1280, "light", query)
    try:
        shown = page.evaluate(SHOWN)
    finally:
        page.context.close()
    assert shown["notices"] == [] and shown["capabilityHidden"]
    assert truth.selected == expected
    assert shown["selected"] == [truth.selected] and shown["steps"] == truth.priorities


@pytest.mark.parametrize(
    ("connector", "model"), [("false", ""), ("true", ""), ("false", "encoder_decoder")]
)
def test_rocm_kv_connector_and_model_attention_type(
    browser: Any, site: Path, connector: str, model: str
) -> None:
    """ROCm reorders on both: its priority function takes the KV connector (ROCM_ATTN
    out), and get_valid_backends keeps ROCM_ATTN out for an encoder-decoder model."""
    query = f"?platform=rocm&arch=gfx942&installed.aiter=false&use_kv_connector={connector}"
    page = open_page(browser, site, 1280, "light", f"{query}&model_attn_type={model}")
    try:
        shown = page.evaluate(SHOWN)
        on_cuda = _choose(page, "platform", "cuda")
    finally:
        page.context.close()
    config = Config(use_kv_connector=connector == "true", model_attn_type=model or None)
    truth = _select("rocm", "gfx942", config, {}, {"installed.aiter": "false"})
    assert shown["notices"] == [] and not shown["connectorHidden"]
    assert shown["selected"] == [truth.selected]
    assert shown["steps"] == truth.priorities
    assert ("ROCM_ATTN" in shown["steps"]) == (connector == "false" and model == "")
    assert on_cuda["connectorHidden"]  # CUDA's code reads neither


def test_the_address_sets_platform_gpu_and_variables(browser: Any, site: Path) -> None:
    query = "?platform=rocm&arch=gfx1201&VLLM_ROCM_USE_AITER=1&installed.aiter=false"
    page = open_page(browser, site, 1280, "light", query)
    try:
        shown = page.evaluate(SHOWN)
    finally:
        page.context.close()
    env, assume = {"VLLM_ROCM_USE_AITER": "1"}, {"installed.aiter": "false"}
    truth = _select("rocm", "gfx1201", Config(), env, assume)
    assert shown["notices"] == []
    assert shown["selected"] == [truth.selected]
    assert shown["assuming"] == ["Assuming: VLLM_ROCM_USE_AITER=1, installed.aiter=false"]


def test_a_variable_value_the_page_cannot_answer_is_flagged(browser: Any, site: Path) -> None:
    page = open_page(browser, site, 1280, "light", "?VLLM_HAS_FLASHINFER_CUBIN=<b>2</b>")
    try:
        shown = page.evaluate(SHOWN)
        bold = page.evaluate("document.querySelectorAll('.attn-selector b').length")
    finally:
        page.context.close()
    assert shown["selected"] == [] and bold == 0
    assert any("<b>2</b>" in n for n in shown["notices"]), shown
