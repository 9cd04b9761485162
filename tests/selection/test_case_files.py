"""``select --cases`` against every CUDA and ROCm case file vLLM's own code answered:
the pick, the priority list and every rejection reason, in vLLM's order, case by
case. A difference is either fixed or listed exactly in known_differences.toml."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import vllm_trees
from known import assert_exactly

from sphinxext_attn.cli.main import main

#: the case files of vLLM's automatic selection (select/README: CUDA and ROCm)
CASE_FILES = (
    "select-0.23.0.json",
    "select-0.33.0.json",
    "select-0.33.0-cubin.json",
    "rocm-0.33.0-gfx942.json",
    "rocm-0.33.0-gfx942-aiter.json",
    "rocm-0.33.0-gfx1201-aiter.json",
    "rocm-0.33.0-gfx1100.json",
)
#: a file recorded with FlashInfer's cubins present (README: ``*-cubin.json``)
CUBIN = ["--env", "VLLM_HAS_FLASHINFER_CUBIN=1"]
#: the reference machine's build of 0.33.0 lacked the FA4 cute-DSL modules its wheel
#: normally holds (``vllm.vllm_flash_attn.cute``: not in the source tree): vLLM's
#: reasons say so ("FA4 cute-DSL entry point failed to import: ..."), and so do ours
#: given that fact of the machine (a full build imports it: the default)
REFERENCE_BUILD = ["--assume", "installed.vllm.vllm_flash_attn.cute=false"]

pytestmark = pytest.mark.realtree


def _select_dir() -> Path:
    return vllm_trees.shared_dir() / "vllm" / "select"


def test_every_shared_case_file_is_compared() -> None:
    shipped = {p.name for p in _select_dir().glob("*.json")}
    automatic = {n for n in shipped if re.match(r"(select|rocm)-", n)}
    assert automatic == set(CASE_FILES)


def differences(cases: list[dict[str, object]], answers: list[dict[str, object]]) -> list[str]:
    """``INDEX FIELD`` (``INDEX rejected BACKEND`` for reasons) of each case where
    the answer differs from vLLM's."""
    assert len(answers) == len(cases)
    found = []
    for index, (case, answer) in enumerate(zip(cases, answers, strict=True)):
        for key in ("selected", "priorities"):
            if answer.get(key) != case[key]:
                found.append(f"{index} {key}")
        ours, theirs = answer.get("rejected", {}), case["rejected"]
        assert isinstance(ours, dict) and isinstance(theirs, dict)
        for backend in sorted(set(ours) | set(theirs)):
            if ours.get(backend) != theirs.get(backend):
                found.append(f"{index} rejected {backend}")
    return found


@pytest.mark.parametrize("name", CASE_FILES)
def test_select_cases_answers_as_vllm(name: str, tmp_path: Path) -> None:
    path = _select_dir() / name
    version = re.match(r"\w+-(\d+\.\d+\.\d+)", name)
    assert version is not None
    tree = vllm_trees.tree(version[1])
    out = tmp_path / "answers.json"
    args = ["select", "--root", str(tree), "--cases", str(path), "--format", "json"]
    args += ["--no-cache", "-o", str(out), *(CUBIN if "-cubin" in name else [])]
    args += REFERENCE_BUILD if name.startswith("select-0.33.0") else []
    assert main(args) == 0
    cases = json.loads(path.read_text(encoding="utf-8"))
    answers = json.loads(out.read_text(encoding="utf-8"))
    assert_exactly(differences(cases, answers), "select-cases", name.removesuffix(".json"))
