"""Only the ``vllm`` package is the analysed tree (issue 24, item 0).

An installed distribution is a ``site-packages`` holding ``vllm/`` beside
torch, flashinfer and many others. Those are outside the tree: an import of
them is external, exactly as when they are absent, and a ``tools/`` or
``docs/`` there is not vLLM's. Stand-in packages below are built to break the
analysis if it followed them (``torch.backends`` defined in terms of itself, a
``flashinfer`` that raises, a generator script with no columns).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import vllm_trees
from attn_sphinx_util import MINI_TREE

from sphinxext_attn.analysis.pipeline import analyze
from sphinxext_attn.cli.main import main
from sphinxext_attn.render.jsonout import render_json
from sphinxext_attn.source.tree import SourceTree

STAND_INS = {
    "torch/__init__.py": (
        "from torch import backends as backends\n"
        "backends = backends\n"
        "float16 = 'not a dtype'\n"
        "def __getattr__(name):\n    return __getattr__(name)\n"
    ),
    "torch/backends/__init__.py": "from torch import backends\n",
    "flashinfer/__init__.py": "raise ImportError('a stand-in')\n",
    "triton/__init__.py": "def cdiv(a, b):\n    return 0\n",
    # a distribution's own tools/ and docs/ folders: not vLLM's generator and page
    "tools/pre_commit/generate_attention_backend_docs.py": "raise SystemExit\n",
    "docs/design/attention_backends.md": "# not vLLM's page\n",
    "vllm-0.0.0.dist-info/METADATA": "Name: vllm\nVersion: 0.0.0\n",
}


def site_packages(dest: Path, tree: Path, version: str = "0.0.0") -> Path:
    """``dest`` laid out as a site-packages: ``tree``'s vllm/ (hard links), its
    dist-info, and the stand-in packages beside it."""
    shutil.copytree(tree / "vllm", dest / "vllm", copy_function=os.link)
    for rel, text in STAND_INS.items():
        path = dest / rel.replace("0.0.0", version)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace("0.0.0", version), encoding="utf-8")
    return dest


def without_root(data: str) -> dict:
    out = json.loads(data)
    out.pop("root")
    return out


def test_other_packages_are_outside_the_tree():
    tree = SourceTree(MINI_TREE)
    assert tree.module_file("vllm.platforms.cuda") == "vllm/platforms/cuda.py"
    for dotted in ("torch", "torch.backends", "flashinfer", "vllm_other", "tools"):
        assert tree.module_file(dotted) is None


def test_installed_layout_is_detected(tmp_path):
    site = site_packages(tmp_path / "site-packages", MINI_TREE)
    assert SourceTree(site).installed
    assert not SourceTree(MINI_TREE).installed
    assert not SourceTree(site).exists("tools/pre_commit/generate_attention_backend_docs.py")
    assert SourceTree(site).exists("vllm/platforms/cuda.py")


@pytest.mark.parametrize("profile", ["runtime", "vllm-page"])
def test_site_packages_gives_the_source_trees_answers(tmp_path, profile):
    from runtime_trees import runtime_tree

    src = runtime_tree(tmp_path / "src")
    site = site_packages(tmp_path / "site-packages", src)
    source = analyze(src, profile=profile)
    installed = analyze(site, profile=profile)
    assert without_root(render_json(installed)) == without_root(render_json(source))
    assert not [f for f in installed.files if not f.startswith("vllm/")]
    assert [str(d) for d in installed.diagnostics] == [str(d) for d in source.diagnostics]


def test_a_registry_entry_outside_the_package_is_a_warning(tmp_path):
    from treebuilder import DEFAULT_ENTRIES, REGISTRY, build_tree, registry_source

    entries = dict(DEFAULT_ENTRIES, TRITON_ATTN="torch.backends.TritonAttentionBackend")
    root = build_tree(tmp_path / "tree", {REGISTRY: registry_source(entries)})
    (root / "torch").mkdir()
    (root / "torch" / "backends.py").write_text("class TritonAttentionBackend:\n    pass\n")
    analysis = analyze(root, profile="vllm-page")
    assert "TRITON_ATTN" not in {r.name for r in analysis.backends}
    found = [d for d in analysis.diagnostics if "outside the vllm package" in d.message]
    assert found and not found[0].release and found[0].location.path == REGISTRY


@pytest.mark.realtree
def test_installed_033_equals_the_source_tree(tmp_path, capsys):
    """vLLM 0.33.0 as an installed distribution beside other packages: the JSON
    (root aside) and every select case file answer as the source tree does."""
    src = vllm_trees.tree("0.33.0")
    site = site_packages(tmp_path / "site-packages", src, "0.33.0")
    outputs = {}
    for name, root in (("source", src), ("installed", site)):
        assert main(["--root", str(root), "--no-cache", "--format", "json", "-o", "-"]) == 0
        analysis = without_root(capsys.readouterr().out)
        cases = vllm_trees.shared_dir() / "vllm" / "select" / "select-0.33.0.json"
        args = ["select", "--root", str(root), "--no-cache", "--cases", str(cases)]
        assert main(args) == 0
        outputs[name] = (analysis, capsys.readouterr().out)
    assert outputs["installed"][0]["version"] == "0.33.0"
    assert outputs["installed"] == outputs["source"]
