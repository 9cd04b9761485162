"""The runtime profile never imports or executes the analysed tree, and never reads
outside it: registry paths that escape the tree are diagnosed, and the builtins that
would run the tree's code are spied on while it is analysed."""

from __future__ import annotations

import builtins
import os
import sys
from pathlib import Path
from typing import Any

from runtime_trees import FILE, only, runtime_backend
from treebuilder import (
    BACKENDS,
    DEFAULT_ENTRIES,
    REGISTRY,
    backend_source,
    dedent,
    registry_source,
)

from sphinxext_attn.analysis.pipeline import analyze

OTHERS = {"FLASH_ATTN", "TRITON_ATTN", "FLASHINFER", "TRITON_MLA", "CPU_ATTN"}


def test_registry_paths_outside_the_tree_are_diagnosed_and_never_read(tmp_path, monkeypatch):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "evil.py").write_text("class Evil:\n    pass\n")
    root = tmp_path / "root"
    entries = {
        "DOTS": "...outside.evil.Evil",
        "SLASH": "../../outside/evil.Evil",
        "LINKED": "vllm.v1.attention.backends.linked.evil.Evil",
        "LINKED_FILE": "vllm.v1.attention.backends.evil_link.Evil",
    }
    runtime_backend(
        root, "pass\n", extra={REGISTRY: registry_source({**DEFAULT_ENTRIES, **entries})}
    )
    (root / BACKENDS / "linked").symlink_to(outside, target_is_directory=True)
    (root / BACKENDS / "evil_link.py").symlink_to(outside / "evil.py")
    opened: list[str] = []
    real_open = open

    def spy(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(os.path.realpath(file) if isinstance(file, str | Path) else str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", spy)
    analysis = analyze(root)
    names = {r.name for r in analysis.backends}
    assert names >= OTHERS and not names & set(entries)
    for name in entries:
        found = [d for d in analysis.diagnostics if d.message.startswith(f"{name}:")]
        assert found and found[0].location and found[0].location.path == REGISTRY, name
    assert str((root / REGISTRY).resolve()) in opened  # the spy saw the reads
    assert not [p for p in opened if p.startswith(str(outside))]


# -- the analysed code is never imported or executed -------------------------------------
EVIL = """
import sphinxext_attn_marker_module
open(r"{marker}", "w").write("module level ran")
raise SystemExit("module level ran")


class MyBackend(AttentionBackend):
    side = open(r"{marker}", "w")

    @classmethod
    def supports_head_size(cls, head_size, _unused=open(r"{marker}", "w")):
        return True

    @classmethod
    def get_supported_head_sizes(cls):
        exec("open(r'{marker}', 'w')")
        return [__import__("os").system("touch {marker}")]
"""
ONLY_AST = 0x400  # ast.PyCF_ONLY_AST


def test_the_tree_is_never_imported_or_executed(tmp_path, monkeypatch):
    marker = tmp_path / "marker"
    root = tmp_path / "tree"
    evil = backend_source("Unused", "pass\n") + dedent(EVIL).format(marker=marker)
    runtime_backend(root, "pass\n", extra={FILE: evil})
    calls: list[tuple[str, Any]] = []
    parsed: list[str] = []  # ast.parse: compile(..., PyCF_ONLY_AST), allowed

    def guard(name: str, real: Any) -> Any:
        def spy(*args: Any, **kwargs: Any) -> Any:
            flags = args[3] if len(args) > 3 else kwargs.get("flags", 0)
            if name == "compile" and flags & ONLY_AST:
                parsed.append(args[1] if len(args) > 1 else "")
            else:
                calls.append((name, args[0] if args else None))
            return real(*args, **kwargs)

        return spy

    for name in ("exec", "eval", "compile"):
        monkeypatch.setattr(builtins, name, guard(name, getattr(builtins, name)))
    real_import = builtins.__import__

    def no_tree_imports(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.split(".")[0] in ("vllm", "torch", "sphinxext_attn_marker_module"):
            calls.append(("import", name))
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tree_imports)
    before = set(sys.modules)
    analysis = analyze(root)
    monkeypatch.undo()
    assert FILE in parsed or any(FILE in str(p) for p in parsed)  # the spies were in place
    assert not marker.exists()
    new = {m.split(".")[0] for m in set(sys.modules) - before}
    assert not new & {"vllm", "torch", "sphinxext_attn_marker_module"}
    assert "sphinxext_attn_marker_module" not in sys.modules
    assert not [c for c in calls if "marker" in str(c[1]) or c[0] == "import"], calls
    # exec/eval of our own modules and dataclasses is Python's business; of the tree's, never
    from_tree = [
        c
        for c in calls
        if str(root) in str(getattr(c[1], "co_filename", ""))
        or (
            isinstance(c[1], str | bytes)
            and ("AttentionBackend" in str(c[1]) or "vllm" in str(c[1]))
        )
    ]
    assert from_tree == []
    assert {r.name for r in analysis.backends} >= OTHERS
    row = only(analysis, "MY_ATTN")
    assert "open" in row.unknown["Head Sizes"] or "exec" in row.unknown["Head Sizes"]
