"""vLLM's vocabulary has one home: no other module spells a vLLM path or module
name, and the pre-commit filter derived from it covers what the page reads."""

from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

from treebuilder import DEMO_TREE, analyze_page

from sphinxext_attn.vocab import names, paths

PACKAGE = Path(paths.__file__).resolve().parent.parent
#: a tree-relative file or a dotted module of vLLM (``vllm/platforms/cuda.py``,
#: ``vllm.platforms.cuda``), the whole string
VLLM_NAME = re.compile(r"vllm[./][\w./*]+")
#: strings that look like one but name no place of vLLM
NOT_PLACES = {("cli/checks.py", "vllm/x.py")}


def _docstrings(module: ast.Module) -> set[int]:
    out = set()
    for node in ast.walk(module):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            out.add(id(body[0].value))
    return out


def vllm_names_outside_vocab() -> list[tuple[str, str]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("vocab/"):
            continue
        module = ast.parse(path.read_text(encoding="utf-8"))
        skip = _docstrings(module)
        for node in ast.walk(module):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in skip
                and VLLM_NAME.fullmatch(node.value)
                and (rel, node.value) not in NOT_PLACES
            ):
                found.append((rel, node.value))
    return found


def test_only_the_vocabulary_spells_vllm_paths_and_modules() -> None:
    assert vllm_names_outside_vocab() == []


def test_the_scan_sees_a_path() -> None:
    assert VLLM_NAME.fullmatch("vllm/platforms/cuda.py")
    assert VLLM_NAME.fullmatch("vllm.config.cache")
    assert not VLLM_NAME.fullmatch("vllm.")


def test_module_files_and_moved_files() -> None:
    assert paths.CUDA_PLATFORM_FILE == "vllm/platforms/cuda.py"
    assert paths.FA_UTILS_FILES == (
        "vllm/v1/attention/backends/fa_utils.py",
        "vllm/attention/utils/fa_utils.py",
    )


def test_every_file_the_page_reads_is_relevant_to_the_hook() -> None:
    read = analyze_page(DEMO_TREE).files
    assert read
    missed = [f for f in read if not any(fnmatch.fnmatch(f, p) for p in paths.RELEVANT_PATTERNS)]
    assert missed == []


def test_dtype_names_agree() -> None:
    assert names.DTYPE_LABELS == {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32"}
    assert names.DTYPE_NAMES["half"] == "torch.float16"
    assert {names.DTYPE_NAMES[label] for label, _ in names.DTYPES} == {
        torch for _, torch in names.DTYPES
    }
    assert tuple(names.ATTN_TYPE_NAMES) == names.ATTN_TYPES
