"""``analyze()`` on a tree holding a hostile backend, a cyclic or unresolvable base, or a
deep module-level binding still builds the other rows and names the file in a
diagnostic (a limit hit warns, code outside the subset is a note); each run is
contained (tests/hostile_bodies.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from containment import CAN_CONTAIN
from hostile_bodies import FILE, HOSTILE, PEAK_BYTES, contained
from runtime_trees import runtime_backend

from sphinxext_attn.analysis.pipeline import analyze

pytestmark = pytest.mark.skipif(
    not CAN_CONTAIN,
    reason="the containment harness needs fork() and /proc (Linux)",
)


def summary(root: Path) -> dict[str, Any]:
    """What ``analyze(root)`` gives, reduced to plain data a child can send back."""
    analysis = analyze(root)
    return {
        "rows": {r.name: dict(r.unknown) for r in analysis.backends},
        "diagnostics": [
            (d.message, d.location.path if d.location else None) for d in analysis.diagnostics
        ],
        "warned": [d.message for d in analysis.diagnostics if not d.release],
    }


OTHERS = {"FLASH_ATTN", "TRITON_ATTN", "FLASHINFER", "TRITON_MLA", "CPU_ATTN"}
IN_ANALYZE = [
    "range(10**12)",
    "10**10**10",
    "'x' * 10**10",
    "mutual recursion",
    "self recursion",
    "while True",
    "-~ nested 2000 deep",
    "range(10**5) squared",
]

#: of those, the ones that are code outside the subset, not a limit hit
UNSUPPORTED = {"while True"}


@pytest.mark.parametrize("name", IN_ANALYZE)
def test_analyze_keeps_other_rows_and_names_the_file(tmp_path, name):
    body = HOSTILE[name][0].replace("def f(cls", "def get_supported_head_sizes(cls")
    body = body.replace("cls.f(", "cls.get_supported_head_sizes(")
    runtime_backend(tmp_path, body)
    outcome, peak = contained(summary, tmp_path)
    assert isinstance(outcome, dict), outcome
    assert set(outcome["rows"]) >= OTHERS, outcome
    assert all(not outcome["rows"][n] for n in OTHERS), outcome
    assert "Head Sizes" in outcome["rows"]["MY_ATTN"], outcome
    assert any(path == FILE and "MY_ATTN" in msg for msg, path in outcome["diagnostics"]), outcome
    # a limit hit is hostile code (a warning); code outside the subset is a note
    warned = any("MY_ATTN" in msg for msg in outcome["warned"])
    assert warned == (name not in UNSUPPORTED), outcome
    assert peak < PEAK_BYTES


CYCLES = {
    "base is itself": "class MyBackend(MyBackend):\n    pass\n",
    "cyclic bases": "class A(B):\n    pass\n\n\nclass B(A):\n    pass\n\n\n"
    "class MyBackend(A):\n    pass\n",
    "base is a call result": "class MyBackend(make(1)):\n    pass\n\n\n"
    "def make(n):\n    return make(n)\n",
}


@pytest.mark.parametrize("name", CYCLES)
def test_cyclic_or_unresolvable_bases_end(tmp_path, name):
    runtime_backend(tmp_path, "pass\n")
    path = tmp_path / FILE
    text = path.read_text().replace("class MyBackend(AttentionBackend):\n    pass\n", "")
    path.write_text(text + CYCLES[name])
    outcome, _ = contained(summary, tmp_path)
    assert isinstance(outcome, dict), outcome
    assert set(outcome["rows"]) >= OTHERS, outcome
    mine = outcome["rows"].get("MY_ATTN")
    named = [msg for msg, where in outcome["diagnostics"] if where == FILE]
    assert mine is None or (mine and named), outcome  # no row, or its unknowns named


DEEP = "-" * 2000 + "1"
MODULE_LEVEL = {  # name: (file, source appended)
    "registered class name rebound to a deep expression": (FILE, f"\n\nMyBackend = {DEEP}\n"),
    "CacheDType bound to a deep expression": ("vllm/config/cache.py", f"CacheDType = {DEEP}\n"),
}


@pytest.mark.parametrize("name", MODULE_LEVEL)
def test_deep_module_level_binding_does_not_escape_analyze(tmp_path, name):
    rel, source = MODULE_LEVEL[name]
    runtime_backend(tmp_path, "pass\n", extra={"vllm/config/__init__.py": ""})
    path = tmp_path / rel
    path.write_text((path.read_text() if path.exists() else "") + source)
    outcome, _ = contained(summary, tmp_path)
    assert isinstance(outcome, dict), outcome
    assert set(outcome["rows"]) >= OTHERS, outcome
