"""Edges of the command line a sampled mutation run found unpinned, each test
failing with the mutant it was written for.

Mutant argued equivalent: in ``check_source_links`` the trial ``line=1`` ->
``line=2``: the check only asks whether the format string takes a path, a line
and a version; any field spec that formats one positive one-digit int formats
the other (and both fail alike otherwise)."""

from __future__ import annotations

import json

import pytest
from treebuilder import DEMO_TREE

from sphinxext_attn.cli.main import main
from sphinxext_attn.cli.pagefile import generator_keys


def test_a_tree_without_the_page_generator_has_no_marker_keys(tmp_path):
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "__init__.py").write_text("")
    assert generator_keys(tmp_path) is None
    assert generator_keys(DEMO_TREE) is None


def test_select_help_states_each_flags_default(capsys):
    with pytest.raises(SystemExit):
        main(["select", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "KV cache block size, a positive integer (default: the engine's default)" in text
    assert "number of attention heads, a positive integer (default: unknown)" in text
    assert "attention sinks (default: off)" in text
    assert "attention head size, a positive integer (default: 128)" in text
    assert "GPU compute capability MAJOR.MINOR, e.g. 8.0, 9.0, 10.0, 12.0 (default: 9.0)" in text
    assert "(default: bf16)" in text and "(default: decoder)" in text


def _select_json(capsys, *flags: str) -> dict:
    assert (
        main(["select", "--root", str(DEMO_TREE), *flags, "--format", "json", "--no-cache"]) == 0
    )
    return json.loads(capsys.readouterr().out)


def test_the_capability_is_a_default_only_where_the_platform_asks_for_one(capsys):
    assert "capability" in _select_json(capsys)["configuration"]["defaults"]
    rocm = _select_json(capsys, "--platform", "rocm")["configuration"]["defaults"]
    assert "capability" not in rocm and "arch" in rocm and "dtype" in rocm


def test_a_backend_per_kind_needs_a_release_that_has_them(capsys):
    argv = ["select", "--root", str(DEMO_TREE), "--backend", "mla_attention=FLASHMLA"]
    assert main([*argv, "--no-cache"]) == 2
    assert "this release has no per-kind backends" in capsys.readouterr().err


def test_a_case_asking_for_a_backend_the_release_lacks_is_refused(capsys, tmp_path):
    cases = tmp_path / "cases.json"
    case = {"config": {"head_size": 128, "dtype": "bf16"}, "capability": "9.0"}
    cases.write_text(json.dumps([case, {**case, "selected_backend": "NOT_A_BACKEND"}]))
    argv = ["select", "--root", str(DEMO_TREE), "--cases", str(cases), "--no-cache"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "case 1: selected_backend" in err and "NOT_A_BACKEND" in err
