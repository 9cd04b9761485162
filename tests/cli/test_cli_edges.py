"""Edges of the command line a sampled mutation run found unpinned, each test
failing with the mutant it was written for."""

from __future__ import annotations

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
