"""Edges of the selection a sampled mutation run (seed 61) found unpinned, each
test failing with the mutant it was written for."""

from __future__ import annotations

import shutil
from pathlib import Path

from treebuilder import DEMO_TREE

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.selection import Config
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.source.tree import SourceTree

SELECTOR = "vllm/v1/attention/selector.py"
#: the demo's selector config as a dataclass whose ``__post_init__`` reads the GPU
GPU_CONFIG = {
    "from typing import NamedTuple\n": "from dataclasses import dataclass\n",
    "class AttentionSelectorConfig(NamedTuple):": ("@dataclass\nclass AttentionSelectorConfig:"),
    "    use_kv_connector: bool = False\n": (
        "    use_kv_connector: bool = False\n\n"
        "    def __post_init__(self):\n"
        "        from vllm.platforms import current_platform\n\n"
        "        self.use_dcp = current_platform.get_device_capability().major >= 10\n"
    ),
}


def _gpu_config_tree(tmp_path: Path) -> SourceTree:
    root = tmp_path / "tree"
    shutil.copytree(DEMO_TREE, root)
    path = root / SELECTOR
    text = path.read_text(encoding="utf-8")
    for old, new in GPU_CONFIG.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    return SourceTree(root)


def test_a_selector_config_built_from_the_gpu_is_built_for_each_gpu(tmp_path):
    """A config whose making reads the GPU is made again for another GPU; one that
    reads nothing is shared (``if not question.read`` -> ``if not not ...`` shared
    the one made on 9.0 with 10.0, whose ``use_dcp`` is then wrong)."""
    selector = Selector(Interpreter(_gpu_config_tree(tmp_path), Machine()))
    made = {}
    for capability in ("9.0", "10.0"):
        config = Config(capability=capability)
        with selector.interp.question(capability=config.capability_tuple, steps=None):
            made[capability] = selector.build_config(config)
    assert made["9.0"].fields["use_dcp"] is False
    assert made["10.0"].fields["use_dcp"] is True
    plain = Selector(Interpreter(SourceTree(DEMO_TREE), Machine()))
    shared = [plain.build_config(Config(capability=c)) for c in ("9.0", "10.0")]
    assert shared[0] is shared[1]
