"""Every reason vLLM's check gives, in its order: a check the evaluator cannot
settle stands in the list where vLLM's reason would be ("not evaluated: ..."),
even when other reasons already reject the backend; a dependency's feature probe
(``inspect.signature``) is answered as the pinned dependency answers it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from treebuilder import DEMO_TREE

#: the combination check, placed between two of the base class's own checks
COMBINATION = """\
        combination = cls.supports_combination(head_size)
        if combination is not None:
            reasons.append(combination)
"""
BASE_DEFAULT = """
    @classmethod
    def supports_combination(cls, head_size):
        return None
"""
PROBE = """
    @classmethod
    def supports_combination(cls, head_size):
        {check}
        return None
"""
UNSETTLED = 'if torch.cuda.mem_get_info()[0] < head_size:\n            return "too little memory"'
FEATURE = (
    "import inspect\n"
    "        from flashinfer.mla import Wrapper\n"
    "        params = inspect.signature(Wrapper.run).parameters\n"
    '        if not ("scale" in params and params["scale"].kind is '
    "inspect.Parameter.KEYWORD_ONLY):\n"
    '            return "needs a FlashInfer with scale"\n'
    "        if head_size > 128:\n"
    '            return "FLASH_ATTN combination not supported"'
)


def _tree(tmp_path: Path, check: str) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(DEMO_TREE, root)
    base = root / "vllm" / "v1" / "attention" / "backend.py"
    text = base.read_text(encoding="utf-8")
    anchor = "        if not cls.supports_compute_capability(device_capability):\n"
    assert text.count(anchor) == 1
    text = text.replace(anchor, COMBINATION + anchor)
    dcp = "    @classmethod\n    def supports_dcp(cls) -> bool:\n"
    assert text.count(dcp) == 1
    base.write_text(text.replace(dcp, BASE_DEFAULT.lstrip("\n") + "\n" + dcp, 1), "utf-8")
    flash = root / "vllm" / "v1" / "attention" / "backends" / "flash_attn.py"
    text = flash.read_text(encoding="utf-8")
    head = "    @classmethod\n    def supports_head_size("
    assert text.count(head) == 1
    flash.write_text(text.replace(head, PROBE.format(check=check).lstrip("\n") + "\n" + head))
    return root


def _rejected(root: Path, *args: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-m", "sphinxext_attn", "select", "--root", str(root), "--no-cache"]
        + ["--format", "json", "--capability", "7.0", "--head-size", "260", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def test_an_unsettled_check_keeps_its_place_among_the_reasons(tmp_path: Path) -> None:
    answer = _rejected(_tree(tmp_path, UNSETTLED))
    reasons = answer["rejected"]["FLASH_ATTN"]
    assert reasons[0] == "head_size not supported"
    assert reasons[1].startswith("not evaluated: ") and "mem_get_info" in reasons[1]
    assert reasons[2:] == ["compute capability not supported"]


def test_a_feature_probe_finds_what_the_pinned_dependency_has(tmp_path: Path) -> None:
    root = _tree(tmp_path, FEATURE)
    reasons = _rejected(root)["rejected"]["FLASH_ATTN"]
    assert reasons == [
        "head_size not supported",
        "FLASH_ATTN combination not supported",
        "compute capability not supported",
    ]
    answer = _rejected(root, "--assume", "features.flashinfer=false")
    assert answer["rejected"]["FLASH_ATTN"][1] == "needs a FlashInfer with scale"
    assert "features.flashinfer=false" in answer["assumptions"]
