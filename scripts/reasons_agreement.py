#!/usr/bin/env python3
"""How many cases of each shared case file get vLLM's rejection reasons exactly.

    python scripts/reasons_agreement.py [-v]

Runs ``select --cases`` on every ``select-*`` and ``rocm-*`` file of
``../shared/vllm/select`` (the release its name holds; ``*-cubin`` files with
``VLLM_HAS_FLASHINFER_CUBIN=1``) and compares each case's ``rejected`` with the
file's (dict equality). The 0.33.0 files are answered with the reference
machine's build, which lacked the FA4 cute-DSL modules
(``--assume installed.vllm.vllm_flash_attn.cute=false``); a case differing only
by the reasons naming that import is also counted apart (excused), for a run
without the assumption.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

SHARED = Path(__file__).resolve().parent.parent / ".." / "shared" / "vllm"
EXCUSED = "FA4 cute-DSL entry point failed to import"


def _without_excused(rejected: dict[str, list[str]]) -> dict[str, list[str]]:
    kept = {k: [r for r in v if not r.startswith(EXCUSED)] for k, v in rejected.items()}
    return {k: v for k, v in kept.items() if v}


def score(path: Path, verbose: bool) -> str:
    version = re.match(r"\w+-(\d+\.\d+\.\d+)", path.name)
    assert version is not None, path
    tree = subprocess.run(
        [sys.executable, str(SHARED / "fetch"), version[1]],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "answers.json"
        args = ["select", "--root", tree, "--cases", str(path), "--format", "json"]
        args += ["--no-cache", "-o", str(out)]
        args += ["--env", "VLLM_HAS_FLASHINFER_CUBIN=1"] if "-cubin" in path.name else []
        if path.name.startswith("select-0.33.0"):
            args += ["--assume", "installed.vllm.vllm_flash_attn.cute=false"]
        subprocess.run([sys.executable, "-m", "sphinxext_attn", *args], check=True)
        answers = json.loads(out.read_text(encoding="utf-8"))
    cases = json.loads(path.read_text(encoding="utf-8"))
    same, excused = 0, []
    for index, (case, answer) in enumerate(zip(cases, answers, strict=True)):
        ours = answer.get("rejected", {})
        if ours == case["rejected"]:
            same += 1
        elif ours == _without_excused(case["rejected"]):
            excused.append(index)
        elif verbose:
            print(f"{path.name} case {index}: vLLM {case['rejected']} ours {ours}")
    if verbose and excused:
        print(f"{path.name} excused (FA4 cute-DSL import): {excused}")
    n = len(cases)
    return (
        f"{path.name}: identical {same}/{n} ({100 * same / n:.2f}%), "
        f"with the {len(excused)} excused {same + len(excused)}/{n} "
        f"({100 * (same + len(excused)) / n:.2f}%)"
    )


def main() -> None:
    verbose = "-v" in sys.argv[1:]
    folder = SHARED / "select"
    for path in sorted([*folder.glob("select-*.json"), *folder.glob("rocm-*.json")]):
        print(score(path, verbose))


if __name__ == "__main__":
    main()
