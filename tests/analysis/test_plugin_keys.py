"""The plugins of a tree are a value its maker hands over, never state of the
process: a tree made without them reads vLLM's files alone whatever was read
before, trees made from a tree take its plugins, and an analysis is keyed by them."""

from __future__ import annotations

import pytest
from plugin_trees import gaudi_plugin
from treebuilder import DEMO_TREE

from sphinxext_attn.analysis import analyze
from sphinxext_attn.analysis.unit_runner import Runner
from sphinxext_attn.model.environment import (
    REFERENCE,
    Environment,
    EnvironmentError_,
    environment_from,
    known_platforms,
)
from sphinxext_attn.model.key import AnalysisKey
from sphinxext_attn.source.plugin_platforms import read_plugins
from sphinxext_attn.source.plugins import PluginError, find_plugins
from sphinxext_attn.source.tree import SourceTree


@pytest.fixture
def plugins(tmp_path):
    return read_plugins(DEMO_TREE, [str(gaudi_plugin(tmp_path / "gaudi"))])


def test_a_plugin_names_its_platforms_and_reading_it_changes_nothing_else(plugins):
    assert [plugin.platforms for plugin in plugins] == [("hpu",)]
    assert known_platforms(plugins) == ("cuda", "rocm", "xpu", "cpu", "tpu", "hpu")
    assert known_platforms() == ("cuda", "rocm", "xpu", "cpu", "tpu")  # no state left
    assert environment_from(platform="hpu", plugins=plugins).platform == "hpu"
    with pytest.raises(EnvironmentError_, match="'hpu' is not one of cuda, rocm, xpu, cpu, tpu"):
        environment_from(platform="hpu")


def test_a_tree_reads_the_plugins_it_is_given_and_no_others(plugins):
    assert SourceTree(DEMO_TREE).plugin_roots == {}
    given = SourceTree(DEMO_TREE, plugins=plugins)
    assert given.plugin_roots == {"vllm_gaudi": plugins[0].folder}
    assert given.module_file("vllm_gaudi.platform") == "vllm_gaudi/platform.py"
    assert SourceTree(DEMO_TREE).module_file("vllm_gaudi.platform") is None


def test_the_evaluators_tree_takes_the_page_trees_plugins(plugins):
    runner = Runner(str(DEMO_TREE), REFERENCE, None, plugins=plugins)
    assert runner.page.plugins == runner.evaluator.plugins == plugins
    given = Runner(str(DEMO_TREE), REFERENCE, None, SourceTree(DEMO_TREE, plugins=plugins))
    assert given.evaluator.plugin_roots == {"vllm_gaudi": plugins[0].folder}


def test_an_analysis_is_keyed_by_its_plugins(plugins):
    hpu = Environment(platform="hpu")
    bare = AnalysisKey(str(DEMO_TREE), environment=hpu, part="lists")
    read = AnalysisKey(str(DEMO_TREE), environment=hpu, part="lists", plugins=plugins)
    assert bare != read and len({bare, read}) == 2
    assert read == AnalysisKey(str(DEMO_TREE), environment=hpu, part="lists", plugins=plugins)
    with_plugin, without = analyze(read), analyze(bare)
    assert with_plugin.platform.source == "vllm_gaudi/platform.py"
    assert with_plugin.platform.rules and not with_plugin.platform.error
    assert without.platform.error.startswith("no detection plugin for the hpu platform")


def test_a_tree_reading_other_plugins_than_the_key_is_refused(plugins):
    key = AnalysisKey(str(DEMO_TREE), environment=Environment(platform="hpu"), part="bare")
    with pytest.raises(ValueError, match="reads other plugins"):
        analyze(key, source=SourceTree(DEMO_TREE, plugins=plugins))


def test_two_folders_holding_one_package_are_refused(tmp_path):
    first, second = gaudi_plugin(tmp_path / "a"), gaudi_plugin(tmp_path / "b")
    assert find_plugins([]) == ()
    with pytest.raises(PluginError, match=f"^{second.resolve()}: package vllm_gaudi is also in "):
        find_plugins([str(first), str(second)])
