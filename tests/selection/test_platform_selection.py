"""Another platform's selection as a page shows it (selection/platforms.py): the
lists of a platform with ``get_valid_backends`` and the GPUs each backend on them
accepts, the rules of one without, and why there is neither."""

from __future__ import annotations

import shutil
from pathlib import Path

from treebuilder import DEMO_TREE

from sphinxext_attn.model.environment import environment_from
from sphinxext_attn.selection.platforms import evaluate_selection
from sphinxext_attn.source.tree import SourceTree

ROCM_ATTN = "vllm/v1/attention/backends/rocm_attn.py"
#: appended to a backend class of the demo: a check of the GPU
HOPPER_LIKE = """
    @classmethod
    def supports_compute_capability(cls, capability) -> bool:
        return capability.major == 9
"""


def _demo(root: Path, edits: dict[str, str]) -> SourceTree:
    shutil.copytree(DEMO_TREE, root)
    for rel, tail in edits.items():
        path = root / rel
        path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + "\n" + tail, "utf-8")
    return SourceTree(root)


def test_each_backend_on_the_lists_names_the_gpus_its_check_accepts(tmp_path):
    """ROCM_ATTN accepts only gfx9 GPUs (named one by one); a backend whose check
    accepts every GPU is ``any``."""
    tree = _demo(tmp_path / "tree", {ROCM_ATTN: HOPPER_LIKE})
    out = evaluate_selection(tree, environment_from(platform="rocm", arch=""))
    assert not out.error
    assert out.source == "vllm/platforms/rocm.py" and out.lists and not out.rules
    assert out.gpus["ROCM_ATTN"] == ["gfx90a", "gfx942", "gfx950"]
    assert out.gpus["FLASH_ATTN"] == out.gpus["TRITON_ATTN"] == ["any"]


def test_one_named_gpu_is_the_only_one_asked(tmp_path):
    tree = _demo(tmp_path / "tree", {ROCM_ATTN: HOPPER_LIKE})
    on_rdna = evaluate_selection(tree, environment_from(platform="rocm", arch="gfx1100"))
    assert on_rdna.gpus["ROCM_ATTN"] == [] and on_rdna.gpus["TRITON_ATTN"] == ["any"]
    on_gfx9 = evaluate_selection(tree, environment_from(platform="rocm", arch="gfx942"))
    assert on_gfx9.gpus["ROCM_ATTN"] == ["any"]


def test_a_platform_without_lists_gives_its_rules():
    out = evaluate_selection(SourceTree(DEMO_TREE), environment_from(platform="xpu", arch=""))
    assert out.source == "vllm/platforms/xpu.py" and out.rules and not out.lists
    assert out.gpus == {} and not out.error


def test_a_platform_class_that_cannot_be_read_is_the_error(tmp_path):
    root = tmp_path / "tree"
    shutil.copytree(DEMO_TREE, root)
    (root / "vllm/platforms/xpu.py").write_text("raise ImportError('no xpu here')\n", "utf-8")
    out = evaluate_selection(SourceTree(root), environment_from(platform="xpu", arch=""))
    assert out.error.startswith("vllm.platforms.xpu.XPUPlatform is not in the tree")
    assert not out.rules and not out.lists


def test_a_guessed_fact_both_values_agree_on_is_either_way():
    """On RDNA the lists do not depend on aiter being installed: one decision,
    resting on installed.aiter=true|false, no candidates; on gfx942 they do."""
    from sphinxext_attn.knowledge.machine import Machine
    from sphinxext_attn.model.selection import Config
    from sphinxext_attn.pyeval import Interpreter
    from sphinxext_attn.selection.decision import Selector

    def decide(arch: str):  # type: ignore[no-untyped-def]
        env = environment_from({"VLLM_ROCM_USE_AITER": "1"}, None, None, "rocm", arch)
        return Selector(Interpreter(SourceTree(DEMO_TREE), Machine(env))).decide(Config())

    rdna = decide("gfx1100")
    assert rdna.selected == "TRITON_ATTN" and rdna.candidates == []
    assert rdna.assumptions == ["arch=gfx1100", "installed.aiter=true|false"]
    gfx9 = decide("gfx942")
    assert [c["if"] for c in gfx9.candidates] == [
        "aiter is installed (--assume installed.aiter=true)",
        "aiter is not installed (--assume installed.aiter=false)",
    ]


def test_a_list_that_cannot_be_evaluated_on_a_gpu_is_the_error(tmp_path):
    raising = (
        "\n    @classmethod\n    def supports_compute_capability(cls, capability) -> bool:\n"
        '        raise RuntimeError("no GPU check here")\n'
    )
    tree = _demo(tmp_path / "tree", {"vllm/v1/attention/backends/triton_attn.py": raising})
    out = evaluate_selection(tree, environment_from(platform="rocm", arch=""))
    assert out.error == "the list on gfx90a is not evaluated: RuntimeError: no GPU check here"
    assert out.lists == [] and out.gpus == {}
