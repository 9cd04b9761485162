"""Trees older than the releases the tables were built on (vLLM 0.13 and 0.14):
files found in their former homes, and questions asked the way those releases
ask them. The tree is the runtime test tree with files moved back."""

from __future__ import annotations

from pathlib import Path

import pytest
import vllm_trees
from runtime_trees import BACKEND_INTERFACE, RUNTIME_FILES, runtime_tree
from treebuilder import BACKENDS, DEFAULT_FILES, FA_UTILS, REGISTRY

from sphinxext_attn.analysis.pipeline import analyze

OLD_REGISTRY = "vllm/attention/backends/registry.py"
OLD_FA_UTILS = "vllm/attention/utils/fa_utils.py"
ENUM = "class AttentionType(str, Enum):"


def _old_tree(root: Path) -> Path:
    """The registry and fa_utils.py where vLLM 0.13 kept them, and AttentionType
    a plain class of string constants, as it was before it became an enum."""
    iface = RUNTIME_FILES[BACKEND_INTERFACE]
    assert ENUM in iface
    fa_module = "vllm.v1.attention.backends.fa_utils"
    fa_backend = f"{BACKENDS}/flash_attn.py"
    return runtime_tree(
        root,
        {
            REGISTRY: None,
            OLD_REGISTRY: DEFAULT_FILES[REGISTRY],
            FA_UTILS: None,
            OLD_FA_UTILS: DEFAULT_FILES[FA_UTILS],
            fa_backend: DEFAULT_FILES[fa_backend].replace(
                fa_module, "vllm.attention.utils.fa_utils"
            ),
            BACKEND_INTERFACE: iface.replace(ENUM, "class AttentionType:"),
        },
    )


def test_a_tree_with_the_registry_in_its_former_home_has_its_rows(tmp_path):
    new = analyze(runtime_tree(tmp_path / "new"))
    old = analyze(_old_tree(tmp_path / "old"))
    assert [r.name for r in old.backends] == [r.name for r in new.backends]
    assert not [d for d in old.diagnostics if d.subtype in ("missing", "registry")]
    fa = [r for r in old.backends if r.name == "FLASH_ATTN"]
    assert [r.version for r in fa] == [r.version for r in new.backends if r.name == "FLASH_ATTN"]
    assert old.backends[0].sources["Backend"].path != OLD_REGISTRY  # a class, not the enum


def test_attention_types_of_a_plain_constants_class_are_asked_by_value(tmp_path):
    """``AttentionType.DECODER`` was the string "decoder": the answer is the same
    as with the enum, not "None"."""
    new = {r.name: r.attn_types for r in analyze(runtime_tree(tmp_path / "new")).backends}
    old = {r.name: r.attn_types for r in analyze(_old_tree(tmp_path / "old")).backends}
    assert old == new
    assert "Decoder" in old["TRITON_ATTN"]


@pytest.mark.realtree
@pytest.mark.parametrize("version", ["0.13.0", "0.14.1"])
def test_older_releases_are_read(version):
    """vLLM 0.13 (registry, fa_utils.py and AttentionType of the older kind) and
    0.14 (MLA prefill selectors in backends/mla/common.py): rows, attention
    types and the prefill table, with no warning."""
    analysis = analyze(vllm_trees.tree(version))
    names = {r.name for r in analysis.backends}
    assert {"FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLASHMLA", "CUTLASS_MLA"} <= names
    assert {r.attn_types for r in analysis.backends} - {"None"}
    assert dict((r.name, r.attn_types) for r in analysis.backends)["CPU_ATTN"] == "All"
    assert [p.cell("Backend") for p in analysis.mla_prefill][0] == "TRT-LLM Ragged‡"
    assert not [d for d in analysis.diagnostics if not d.release]
