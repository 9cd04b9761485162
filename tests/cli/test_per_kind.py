"""``--backend KIND=NAME`` (0.34's ``attention_config.backend_per_kind``), run in
this process: the layer's kind as the release maps it picks the request, a kind
the release does not have is refused naming those it has; a kind asked twice,
or a model config beside cases, is refused before any work."""

from __future__ import annotations

import json

import pytest
import vllm_trees
from treebuilder import DEMO_TREE

from sphinxext_attn.cli.main import main


def _select(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["select", "--no-cache", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.realtree
def test_a_layers_kind_takes_its_kinds_backend(capsys):
    tree = str(vllm_trees.tree("0.34.0"))
    asked = ["--backend", "FLASH_ATTN", "--backend", "mla_attention=TRITON_MLA"]
    code, out, err = _select(
        capsys, "--root", tree, "--mla", "--head-size", "576", *asked, "--format", "json"
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["selected_backend"] == "TRITON_MLA"
    assert data["configuration"]["values"]["kv_cache_kind"] == "mla_attention"
    code, out, err = _select(
        capsys, "--root", tree, "--head-size", "128", *asked, "--format", "json"
    )
    assert code == 0, err
    plain = json.loads(out)
    assert plain["selected_backend"] == "FLASH_ATTN"
    assert plain["configuration"]["values"]["kv_cache_kind"] == "full_attention"


@pytest.mark.realtree
def test_a_kind_the_release_lacks_is_refused_with_the_kinds_it_has(capsys):
    tree = str(vllm_trees.tree("0.34.0"))
    code, out, err = _select(capsys, "--root", tree, "--backend", "nope=TRITON_MLA")
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert "argument --backend: 'nope' is not a KV-cache kind of this release; choose from " in err
    assert "full_attention" in err and "mla_attention" in err


def test_one_kind_asked_twice_is_refused(capsys):
    twice = ["--backend", "mla_attention=TRITON_MLA", "--backend", "mla_attention=FLASHMLA"]
    code, out, err = _select(capsys, "--root", str(DEMO_TREE), *twice)
    assert code == 2 and out == ""
    assert err == (
        "sphinxext-attn select: argument --backend: mla_attention= given twice; "
        "give one NAME per kind\n"
    )


def test_a_model_config_beside_cases_is_refused(capsys, tmp_path):
    cases = tmp_path / "cases.json"
    cases.write_text("[]", encoding="utf-8")
    args = ["--root", str(DEMO_TREE), "--model-config", "m.json", "--cases", str(cases)]
    code, out, err = _select(capsys, *args)
    assert code == 2 and out == ""
    assert err == (
        "sphinxext-attn select: --model-config: not with --cases (give a case key model_config)\n"
    )
