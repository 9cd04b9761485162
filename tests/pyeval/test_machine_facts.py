"""What the machine answers for the probes backend code makes of it: each answer
as assumed, else the reference machine's, and noted as a fact (or a guess)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluator import HEADER, MODULE, cm
from runtime_trees import runtime_backend

from sphinxext_attn.knowledge.machine import Machine, machine_of
from sphinxext_attn.model.environment import Environment
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.pyeval.values import NODE
from sphinxext_attn.source.tree import SourceTree

BODY = (
    cm("cpu", "import torch", "return torch.cpu._is_amx_tile_supported()")
    + cm(
        "tools",
        "import shutil",
        "return (shutil.which('nvcc'), shutil.which('/opt/cuda/bin/nvcc/'))",
    )
    + cm(
        "spec",
        "import importlib.util",
        "return importlib.util.find_spec('flash_attn.ops') is not None",
    )
)


def answer(
    tmp_path: Path, name: str, platform: str = "cuda", **assume: str
) -> tuple[Any, Interpreter]:
    runtime_backend(tmp_path, BODY, header=HEADER)
    machine = Machine(Environment(assume=assume, platform=platform))
    it = Interpreter(SourceTree(tmp_path), machine)
    cls = it.module_attr(it.module(MODULE), "MyBackend", NODE)
    it.capability_read = 0
    value = it.call(it.getattr(cls, name, NODE, ""), [], {}, NODE, "")
    return value, it


def test_a_hardware_probe_nobody_set_is_a_guess(tmp_path):
    """Off CUDA a probe nobody set is guessed false (and said to be a guess); on
    CUDA, and anywhere it is set, it is answered as assumed."""
    probe = "torch.cpu._is_amx_tile_supported"
    value, it = answer(tmp_path, "cpu", platform="xpu")
    assert value is False and machine_of(it).guessed == {probe}
    assert it.facts_of(it.capability_read) == [(probe, "false")]
    for platform in ("xpu", "cuda"):
        value, it = answer(tmp_path, "cpu", platform=platform, **{probe: "true"})
        assert value is True and machine_of(it).guessed == set()
        assert it.facts_of(it.capability_read) == [(probe, "true")]


def test_a_tool_on_path_is_found_by_its_last_name(tmp_path):
    value, it = answer(tmp_path, "tools")
    assert value == ("/usr/local/bin/nvcc", "/opt/cuda/bin/nvcc/")
    assert it.facts_of(it.capability_read) == [("which.nvcc", "true")]
    value, it = answer(tmp_path, "tools", **{"which.nvcc": "false"})
    assert value == (None, None)


def test_a_probed_package_is_known_by_its_top_name(tmp_path):
    value, it = answer(tmp_path, "spec", **{"installed.flash_attn": "true"})
    assert value is True
    assert it.facts_of(it.capability_read) == [("installed.flash_attn", "true")]
    value, it = answer(tmp_path, "spec", **{"installed.flash_attn": "false"})
    assert value is False
