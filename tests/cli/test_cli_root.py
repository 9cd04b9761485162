"""The command line finds vLLM as the extension does, and names the tree it used."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from attn_sphinx_util import MINI_TREE

from sphinxext_attn.cli.main import RELEVANT_PATTERNS, is_relevant, main
from sphinxext_attn.source import locate
from sphinxext_attn.sphinx import trees

REPO = Path(__file__).resolve().parents[2]


def test_current_folder_with_vllm_is_used(tmp_path, monkeypatch, capsys):
    tree = tmp_path / "checkout"
    shutil.copytree(MINI_TREE, tree)
    monkeypatch.chdir(tree)
    monkeypatch.setattr(locate, "installed_vllm_root", lambda: "/somewhere/else")
    assert main(["-o", "-"]) == 0
    out = capsys.readouterr()
    assert "## Backend Priority (CUDA)" in out.out
    assert f"using the vLLM tree {tree} (the current folder)" in out.err


def test_installed_vllm_when_the_current_folder_has_none(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(MINI_TREE))  # an "installed" vllm, never imported
    sys.modules.pop("vllm", None)
    assert main(["-o", "-"]) == 0
    out = capsys.readouterr()
    assert f"using the vLLM tree {MINI_TREE} (the installed vllm distribution)" in out.err
    assert "## Backend Priority (CUDA)" in out.out
    assert "vllm" not in sys.modules


def test_no_tree_anywhere_is_a_clear_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(locate, "installed_vllm_root", lambda: None)
    assert main(["-o", "-"]) == 2
    err = capsys.readouterr().err
    assert "no vLLM tree" in err and "--root" in err
    assert "Traceback" not in err


def test_explicit_root_is_not_announced(capsys):
    assert main(["--root", str(MINI_TREE), "-o", "-"]) == 0
    assert "using the vLLM tree" not in capsys.readouterr().err


def test_the_extension_and_the_cli_share_the_lookup():
    assert trees.installed_vllm_root is locate.installed_vllm_root
    code = (
        "import sys, sphinxext_attn.source.locate, sphinxext_attn.cli.main; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('sphinx', 'docutils')); "
        "sys.exit(str(bad) if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr  # the command line loads no Sphinx


#: A row of the mini tree as each profile reads it: the runtime profile asks the class
#: (whose supports_dtype the mini tree lacks), vllm-page reads the literal lists.
TRITON_ROW = {
    # KV Dtypes: the list the class declares (its check cannot be asked: a note says so)
    "runtime": "| `TRITON_ATTN` |  | ? | `auto`, `fp8` | ? | ? | ✅ | ❌ | ? | ? |",
    "vllm-page": "| `TRITON_ATTN` |  | fp16, bf16, fp32 | `auto`, `fp8` | Any | 64, 128, 256 "
    "| ✅ | ❌ | Decoder | Any |",
}


@pytest.mark.parametrize("profile", ["runtime", "vllm-page"])
def test_profile_option(profile, capsys):
    assert main(["--root", str(MINI_TREE), "--profile", profile, "-o", "-"]) == 0
    out = capsys.readouterr().out
    assert TRITON_ROW[profile] in out.splitlines()
    assert ("**Notation of evaluated cells:**" in out) == (profile == "runtime")


def test_bad_profile_names_the_choices(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--root", str(MINI_TREE), "--profile", "page"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "'runtime'" in err and "'vllm-page'" in err


def test_release_problems_are_notes_on_stderr(tmp_path, capsys):
    from treebuilder import DEFAULT_ENTRIES, REGISTRY, build_tree, registry_source

    entries = dict(DEFAULT_ENTRIES, NO_ATTENTION="vllm.v1.attention.backends.none.NoBackend")
    tree = build_tree(tmp_path / "t", {REGISTRY: registry_source(entries)})
    assert main(["--root", str(tree), "-o", "-"]) == 0
    err = capsys.readouterr().err
    assert "note: vllm/v1/attention/backends/registry.py:" in err
    assert "NO_ATTENTION: module file" in err and "warning" not in err


# -- the pre-commit hook's file filter is the command line's ----------------------


def _hook_files_regex() -> str:
    text = (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    match = re.search(r"^\s+files: '(.*)'$", text, re.M)
    assert match, "no files: line"
    return match.group(1)


SAMPLE_PATHS = [
    "vllm/v1/attention/backends/flash_attn.py",
    "vllm/v1/attention/backends/mla/flashmla.py",
    "vllm/v1/attention/backends/mla/deep/x.py",
    "vllm/v1/attention/backend.py",
    "vllm/v1/attention/backends.py",
    "vllm/v1/attention/selector.py",
    "vllm/model_executor/layers/attention/mla_attention.py",
    "vllm/model_executor/layers/attention/sub/x.py",
    "vllm/model_executor/layers/linear.py",
    "vllm/platforms/cuda.py",
    "vllm/platforms/rocm.py",
    "vllm/utils/flashinfer.py",
    "vllm/utils/flashinfer.pyc",
    "docs/design/attention_backends.md",
    "tools/pre_commit/generate_attention_backend_docs.py",
    "docs/mkdocs/gen_files/generate_attention_backends.py",
    "docs/mkdocs/gen_files/other.py",
    "docs/design/other.md",
    "README.md",
    "vllm/v1/attention/backends/README.md",
]


@pytest.mark.parametrize("path", SAMPLE_PATHS)
def test_hook_filter_matches_relevant_patterns(path):
    assert bool(re.search(_hook_files_regex(), path)) == is_relevant(path, Path("."))


def test_hook_entry():
    text = (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert "- id: attention-backends" in text
    assert (
        "entry: sphinxext-attn --check --profile vllm-page -o docs/design/attention_backends.md"
        in text
    )
    assert "pass_filenames: true" in text and "language: python" in text
    assert len(RELEVANT_PATTERNS) == 11


def test_select_finds_the_tree_as_the_page_does(tmp_path, monkeypatch, capsys):
    from sphinxext_attn.cli import select as select_cli

    demo = REPO / "docs" / "_demo_tree"
    tree = tmp_path / "checkout"
    shutil.copytree(demo, tree)
    monkeypatch.chdir(tree)
    monkeypatch.setattr(locate, "installed_vllm_root", lambda: "/somewhere/else")
    assert select_cli.main(["--format", "json"]) == 0
    out = capsys.readouterr()
    assert f"using the vLLM tree {tree} (the current folder)" in out.err
    assert json.loads(out.out)["selected"]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(locate, "installed_vllm_root", lambda: None)
    assert select_cli.main([]) == 2
    err = capsys.readouterr().err
    assert "no vLLM tree" in err and "--root" in err and "Traceback" not in err
