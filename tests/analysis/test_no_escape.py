"""No file outside the root is opened, and the analysed code never runs.

An audit hook (``sys.addaudithook``; hooks cannot be removed, so it records
only while a module-level flag is set) watches ``open``, ``exec`` and
``import`` events during ``analyze_page()`` of hostile trees.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from treebuilder import (
    BACKENDS,
    CUDA,
    DEFAULT_ENTRIES,
    FA_UTILS,
    REGISTRY,
    analyze_page,
    backend_source,
    build_tree,
    registry_source,
)

import sphinxext_attn
from sphinxext_attn.cli.main import main

_RECORDING = False
_EVENTS: list[tuple[str, object]] = []


def _hook(event: str, args: tuple) -> None:
    if not _RECORDING:
        return
    if event == "open" and args and isinstance(args[0], str | bytes | os.PathLike):
        _EVENTS.append(("open", os.fsdecode(args[0])))
    elif event == "exec" and args:
        _EVENTS.append(("exec", getattr(args[0], "co_filename", "?")))
    elif event == "import" and args and isinstance(args[0], str):
        _EVENTS.append(("import", args[0]))


sys.addaudithook(_hook)

#: Where the interpreter and this package may legitimately open files (lazy imports).
ALLOWED_PREFIXES = tuple(
    os.path.realpath(p)
    for p in {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
        str(Path(sphinxext_attn.__file__).parent),
    }
)


def _within(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def record(fn, *args):
    """Run ``fn(*args)`` and return (result, events) seen meanwhile."""
    global _RECORDING
    _EVENTS.clear()
    _RECORDING = True
    try:
        result = fn(*args)
    finally:
        _RECORDING = False
    return result, list(_EVENTS)


def opened_outside(events, root: Path) -> list[str]:
    real_root = os.path.realpath(root)
    bad = []
    for kind, path in events:
        if kind != "open":
            continue
        real = os.path.realpath(path)
        if _within(real, real_root):
            continue
        if any(_within(real, p) for p in ALLOWED_PREFIXES):
            continue
        bad.append(real)
    return bad


def hostile_tree(tmp_path: Path) -> tuple[Path, Path]:
    """A tree whose files, folders and class paths point at ``secret/`` beside it."""
    secret = tmp_path / "secret"
    secret.mkdir()
    for name in ("triton_attn.py", "triton_mla.py", "base.py", "cuda.py", "fa.py", "passwd.py"):
        (secret / name).write_text(backend_source("TritonAttentionBackend"))
    (secret / "utils").mkdir()
    (secret / "utils" / "flashinfer.py").write_text("def supports_trtllm_attention(): pass\n")
    entries = dict(
        DEFAULT_ENTRIES,
        DOTDOT="..secret.passwd.X",
        LEADING=".vllm.v1.attention.backends.flash_attn.FlashAttentionBackend",
        EMPTY="vllm..v1.attention.backends.flash_attn.FlashAttentionBackend",
        DOTS="...",
        UP="vllm.v1.attention.backends.......secret.passwd.X",
        INHERITS="vllm.v1.attention.backends.child.ChildBackend",
        DEEP_IMPORT="vllm.v1.attention.backends.child2.Child2Backend",
    )
    child = (
        "from vllm.v1.attention.backends.evil import TritonAttentionBackend\n\n\n"
        "class ChildBackend(TritonAttentionBackend):\n    pass\n"
    )
    child2 = (
        "from ..........secret.base import TritonAttentionBackend\n\n\n"
        "class Child2Backend(TritonAttentionBackend):\n    pass\n"
    )
    root = build_tree(
        tmp_path / "tree",
        {
            REGISTRY: registry_source(entries),
            f"{BACKENDS}/triton_attn.py": None,
            CUDA: None,
            FA_UTILS: None,
            "vllm/utils/flashinfer.py": None,
            f"{BACKENDS}/child.py": child,
            f"{BACKENDS}/child2.py": child2,
        },
    )
    (root / BACKENDS / "triton_attn.py").symlink_to(secret / "triton_attn.py")
    (root / BACKENDS / "evil.py").symlink_to(secret / "base.py")
    (root / CUDA).parent.mkdir(parents=True, exist_ok=True)
    (root / CUDA).symlink_to(secret / "cuda.py")
    (root / FA_UTILS).symlink_to(secret / "fa.py")
    (root / "vllm/utils").symlink_to(secret / "utils", target_is_directory=True)
    mla = root / BACKENDS / "mla"
    for f in mla.iterdir():
        f.unlink()
    mla.rmdir()
    mla.symlink_to(secret, target_is_directory=True)
    return root, secret


def test_no_open_outside_root(tmp_path):
    root, secret = hostile_tree(tmp_path)
    analyze_page(build_tree(tmp_path / "warmup"))  # lazy imports happen outside the recording
    analysis, events = record(analyze_page, root)
    opened = [p for k, p in events if k == "open"]
    assert opened, "the hook saw no open at all: it is not working"
    assert opened_outside(events, root) == []
    assert not any(_within(os.path.realpath(p), str(secret)) for p in opened)
    # the faults were reported and the safe rows still built
    assert {"FLASH_ATTN", "FLASHINFER", "CPU_ATTN"} <= {r.name for r in analysis.backends}
    assert not {"TRITON_ATTN", "TRITON_MLA", "DOTDOT", "UP"} & {r.name for r in analysis.backends}
    text = "\n".join(map(str, analysis.diagnostics))
    for needle in ("DOTDOT", "LEADING", "EMPTY", "DOTS", "UP", "triton_attn", "cuda.py"):
        assert needle in text


def test_vllm_folder_itself_a_symlink_out(tmp_path):
    outside = build_tree(tmp_path / "outside")
    root = tmp_path / "tree"
    root.mkdir()
    (root / "vllm").symlink_to(outside / "vllm", target_is_directory=True)
    analysis, events = record(analyze_page, root)
    assert opened_outside(events, root) == []
    assert not any(_within(os.path.realpath(p), str(outside)) for k, p in events if k == "open")
    assert analysis.backends == [] and analysis.diagnostics


# -- planted side effects ------------------------------------------------------------
def planted(marker: Path, where: str) -> str:
    return (
        f"open({str(marker)!r}, 'a').write({where!r})\n"
        "import os as _os\n"
        f"_os.makedirs({str(marker) + '.d'!r}, exist_ok=True)\n"
        "raise SystemExit(42)\n"
    )


@pytest.fixture
def booby_trapped(tmp_path) -> tuple[Path, Path]:
    marker = tmp_path / "MARKER"
    tree = build_tree(tmp_path / "tree")
    for rel in ("vllm/__init__.py", CUDA, REGISTRY, f"{BACKENDS}/flash_attn.py"):
        path = tree / rel
        path.write_text(planted(marker, rel) + path.read_text())
    return tree, marker


def test_planted_code_never_runs_in_analyze(booby_trapped):
    tree, marker = booby_trapped
    had_vllm = "vllm" in sys.modules
    analysis, events = record(analyze_page, tree)
    assert not marker.exists() and not Path(str(marker) + ".d").exists()
    assert not had_vllm and "vllm" not in sys.modules
    assert not [e for e in events if e[0] == "import" and e[1].split(".")[0] == "vllm"]
    ran = [f for k, f in events if k == "exec" and _within(os.path.realpath(f), str(tree))]
    assert ran == []
    assert {p.category for p in analysis.priorities} == {"standard", "mla"}
    assert "FLASH_ATTN" in {r.name for r in analysis.backends}


def test_planted_code_never_runs_in_cli(booby_trapped, tmp_path, capsys):
    tree, marker = booby_trapped
    assert main(["--root", str(tree), "-o", str(tmp_path / "page.md")]) == 0
    assert not marker.exists()
    assert "vllm" not in sys.modules
    assert "| `FLASH_ATTN` |" in (tmp_path / "page.md").read_text(encoding="utf-8")


def test_planted_code_never_runs_in_cli_process(booby_trapped, tmp_path):
    tree, marker = booby_trapped
    env = dict(os.environ, PYTHONPATH=str(tree))  # even with the tree importable
    proc = subprocess.run(
        [sys.executable, "-m", "sphinxext_attn", "--root", str(tree), "-o", "-"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()
    assert "| `FLASH_ATTN` |" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_the_hook_sees_an_outside_open(tmp_path):
    """Self-check: the same detector flags a read outside the root."""
    root, secret = hostile_tree(tmp_path)
    _, events = record(lambda: (secret / "passwd.py").read_text())
    assert opened_outside(events, root) == [os.path.realpath(secret / "passwd.py")]
