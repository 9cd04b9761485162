"""The FlashAttention version a backend runs, from the call its implementation
makes into the kernel: a literal ``fa_version`` wins over what the release's
``get_flash_attn_version`` would answer; several or computed ones say nothing new."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import vllm_trees
from treebuilder import DEMO_TREE

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.selection import Config
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.selection.fa_version import flash_attn_version, passed_version
from sphinxext_attn.source.tree import SourceTree

FLASHMLA = "vllm/v1/attention/backends/mla/flashmla.py"
FLASH_ATTN = "vllm/v1/attention/backends/flash_attn.py"

#: an implementation class whose decode calls the kernel as vLLM's MLA backends do
MLA_IMPL = """

class DemoDecodeImpl:
    def forward_mqa(self, q, kv_c_and_k_pe_cache, attn_metadata):
        return flash_attn_varlen_func(q=q, causal=True, fa_version={decode})

    def other_path(self, q):
        return flash_attn_varlen_func(q=q, fa_version={other})
"""


def _tree(tmp_path: Path, decode: str, other: str) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(DEMO_TREE, tree)
    path = tree / FLASHMLA
    text = path.read_text(encoding="utf-8")
    text = text.replace(
        "class FlashMLABackend(MLACommonBackend):",
        "class FlashMLABackend(MLACommonBackend):\n"
        "    @staticmethod\n"
        "    def get_impl_cls():\n"
        "        return DemoDecodeImpl\n",
    )
    assert "return DemoDecodeImpl" in text
    path.write_text(text + MLA_IMPL.format(decode=decode, other=other), encoding="utf-8")
    return tree


def _interp(tree: Path) -> Interpreter:
    return Interpreter(SourceTree(tree), Machine())


def test_mla_decode_literal_is_the_version_that_runs(tmp_path):
    interp = _interp(_tree(tmp_path, "3", "3"))
    version, where = passed_version(interp, "FLASHMLA") or (None, "")
    assert version == 3
    assert where.startswith(FLASHMLA + ":")
    config = Config(capability="10.0", use_mla=True, head_size=576)
    assert flash_attn_version(interp, config, "FLASHMLA") == 3


@pytest.mark.parametrize(("decode", "other"), [("3", "2"), ("self.fa_version", "3")])
def test_several_or_computed_versions_name_no_literal(tmp_path, decode, other):
    interp = _interp(_tree(tmp_path, decode, other))
    assert passed_version(interp, "FLASHMLA") is None


def test_a_backend_without_literal_keeps_the_helpers_answer(tmp_path):
    """A FLASH_ATTN that asks the helper and passes no literal: the release's helper
    decides (FA3 on 9.0, FA2 on 8.0, as the demo's get_flash_attn_version says)."""
    tree = _tree(tmp_path, "3", "3")
    with (tree / FLASH_ATTN).open("a", encoding="utf-8") as out:
        out.write(
            "\n\nfrom vllm.v1.attention.backends.fa_utils import get_flash_attn_version\n"
            "\n\nclass FlashAttentionImpl(FlashAttentionImpl):\n"
            "    def forward(self, q):\n"
            "        return flash_attn_varlen_func(q, fa_version=get_flash_attn_version())\n"
        )
    interp = _interp(tree)
    assert passed_version(interp, "FLASH_ATTN") is None
    assert flash_attn_version(interp, Config(capability="9.0"), "FLASH_ATTN") == 3
    assert flash_attn_version(interp, Config(capability="8.0"), "FLASH_ATTN") == 2


@pytest.mark.realtree
def test_deepseek_v3_decode_on_hopper_runs_fa3_on_0_34():
    """0.34.0's FLASH_ATTN_MLA decode passes ``fa_version=3`` ("only version 3 is
    supported"), whatever get_flash_attn_version would answer on 9.0."""
    interp = _interp(vllm_trees.tree("0.34.0"))
    config = Config(capability="9.0", use_mla=True, head_size=576)
    assert flash_attn_version(interp, config, "FLASH_ATTN_MLA") == 3
    assert (passed_version(interp, "FLASH_ATTN_MLA") or (0, ""))[1].startswith(
        "vllm/v1/attention/backends/mla/flashattn_mla.py:"
    )


FA_UTILS = "vllm/v1/attention/backends/fa_utils.py"
HELPER = "def get_flash_attn_version() -> int:"
#: an implementation of FLASH_ATTN that asks the release's helper (no literal)
ASKING_IMPL = (
    "\n\nfrom vllm.v1.attention.backends.fa_utils import get_flash_attn_version\n"
    "\n\nclass FlashAttentionImpl(FlashAttentionImpl):\n"
    "    def forward(self, q):\n"
    "        return flash_attn_varlen_func(q, fa_version=get_flash_attn_version())\n"
)


@pytest.mark.parametrize(
    "helper",
    [
        "get_flash_attn_version = 3\n\n\ndef _former() -> int:",
        "def get_flash_attn_version() -> int:\n    raise RuntimeError('no FA here')\n\n\n"
        "def _former() -> int:",
    ],
    ids=["not-a-function", "raises"],
)
def test_a_helper_that_gives_no_version_gives_none(tmp_path, helper):
    """The release's helper not a function, or raising: no version for a backend
    that asks it (the same tree with the demo's helper says 3 on 9.0)."""
    tree = _tree(tmp_path, "3", "3")
    with (tree / FLASH_ATTN).open("a", encoding="utf-8") as out:
        out.write(ASKING_IMPL)
    config = Config(capability="9.0")
    assert flash_attn_version(_interp(tree), config, "FLASH_ATTN") == 3
    path = tree / FA_UTILS
    text = path.read_text(encoding="utf-8")
    assert HELPER in text
    path.write_text(text.replace(HELPER, helper, 1), encoding="utf-8")
    assert flash_attn_version(_interp(tree), config, "FLASH_ATTN") is None


def test_no_literal_without_the_backend_its_module_or_its_impl_class(tmp_path):
    assert passed_version(_interp(DEMO_TREE), "NOT_A_BACKEND") is None
    tree = _tree(tmp_path, "3", "3")
    assert passed_version(_interp(tree), "FLASHMLA") is not None
    path = tree / FLASHMLA
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("return DemoDecodeImpl", "return IMPLS[0]", 1), encoding="utf-8")
    assert passed_version(_interp(tree), "FLASHMLA") is None  # get_impl_cls names no class
    path.write_text("class FlashMLABackend(:\n", encoding="utf-8")
    assert passed_version(_interp(tree), "FLASHMLA") is None  # a module that does not parse
    path.unlink()
    assert passed_version(_interp(tree), "FLASHMLA") is None
