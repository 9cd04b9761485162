"""vllm-ascend- and vllm-gaudi-shaped plugins (tests/plugin_trees.py) beside the demo
tree: every key of the selection dicts answered with its class and the fact that
decides it, the platforms named by their device_name, the entry points found from
setup.py, pyproject.toml and an installed distribution's entry_points.txt."""

from __future__ import annotations

import json

import pytest
from plugin_trees import (
    ASCEND_310P_BACKENDS,
    ASCEND_BACKENDS,
    GAUDI_BACKENDS,
    ascend_plugin,
    gaudi_plugin,
)
from treebuilder import DEMO_TREE

from sphinxext_attn.analysis import analyze
from sphinxext_attn.cli.main import main
from sphinxext_attn.model.environment import Environment
from sphinxext_attn.model.key import AnalysisKey
from sphinxext_attn.source.plugin_platforms import read_plugins

KEY_FLAGS = {0: "--mla", 1: "--sparse"}  # use_compress: no flag, the selector config's


def _select(capsys, plugin, platform: str, *flags: str) -> dict:
    args = ["select", "--root", str(DEMO_TREE), "--plugin", str(plugin), "--platform", platform]
    assert main([*args, *flags, "--format", "json", "--no-cache"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def ascend(tmp_path):
    return ascend_plugin(tmp_path / "vllm-ascend")


@pytest.fixture
def gaudi(tmp_path):
    return gaudi_plugin(tmp_path / "vllm-gaudi")


def _flags(key: tuple[bool, bool, bool]) -> list[str]:
    return [flag for i, flag in KEY_FLAGS.items() if key[i]]


@pytest.mark.parametrize("soc", ["false", "true"])
def test_every_selectable_ascend_key_with_the_soc_fact_set(capsys, ascend, soc):
    table = ASCEND_310P_BACKENDS if soc == "true" else ASCEND_BACKENDS
    for key, path in table.items():
        if key[2]:  # use_compress is no field of the demo tree's selector config
            continue
        got = _select(capsys, ascend, "npu", *_flags(key), "--assume", f"is_310p={soc}")
        assert (got["selected"], got["class_path"]) == ("CUSTOM", path), key
        assert got["assumptions"] == [f"is_310p={soc}"]


def test_an_ascend_key_the_310p_dict_lacks_raises_keyerror(capsys, ascend):
    got = _select(capsys, ascend, "npu", "--mla", "--sparse", "--assume", "is_310p=true")
    assert got["selected"] is None and got["raised"] == "KeyError: (True, True, False)"


def test_unset_the_soc_fact_makes_the_ascend_answer_conditional(capsys, ascend):
    got = _select(capsys, ascend, "npu")
    assert got["selected"] is None and got["assumptions"] == ["is_310p=true|false"]
    assert [(c["backend"], c.get("class_path"), c["if"]) for c in got["candidates"]] == [
        ("CUSTOM", ASCEND_310P_BACKENDS[(False, False, False)],
         "is_310p() is true (--assume is_310p=true)"),
        ("CUSTOM", ASCEND_BACKENDS[(False, False, False)],
         "is_310p() is false (--assume is_310p=false)"),
    ]  # fmt: skip


def test_the_ascend_rules_list_every_key_of_both_dicts(ascend):
    plugins = read_plugins(DEMO_TREE, [str(ascend)])
    environment = Environment(platform="npu")
    part = analyze(
        AnalysisKey(str(DEMO_TREE), environment=environment, part="features", plugins=plugins)
    )
    assert part.platform.source == "vllm_ascend/platform.py"
    by_class = {r.class_path: r.conditions for r in part.platform.rules if r.class_path}
    assert set(by_class) == {*ASCEND_BACKENDS.values(), *ASCEND_310P_BACKENDS.values()}
    for key, path in ASCEND_310P_BACKENDS.items():
        mla, sparse, compress = key
        words = f"use_mla == {mla} and use_sparse == {sparse} and use_compress == {compress}"
        assert by_class[path] == ("is_310p()", words)
    assert ("any other key",) in [r.conditions for r in part.platform.rules]
    rows = {r.class_path: r for r in part.backends}
    assert set(rows) == set(by_class)
    # names collide (CUSTOM): each class a row of its own, in the table its is_mla says
    names = sorted(r.name for r in part.backends)
    assert names[0] == "CUSTOM (AscendAttentionBackend)" and len(set(names)) == len(names)
    assert rows[ASCEND_BACKENDS[(True, False, False)]].table == "mla"
    assert rows[ASCEND_310P_BACKENDS[(False, False, False)]].cell("Block Sizes") == "16"
    assert rows[ASCEND_BACKENDS[(False, False, False)]].cell("Dtypes") == "not declared"
    # CUDA graphs: what each builder declares
    graphs = {path: row.cudagraph_support for path, row in rows.items()}
    assert (
        graphs[ASCEND_BACKENDS[(False, False, False)]] == "ALWAYS (AscendAttentionBackendBuilder)"
    )
    assert (
        graphs[ASCEND_BACKENDS[(True, False, False)]] == "UNIFORM_BATCH (AscendMLABackendBuilder)"
    )
    assert graphs[ASCEND_310P_BACKENDS[(False, False, False)]] == (
        "NEVER (AscendAttentionBackend310Builder)"
    )


@pytest.mark.parametrize("installed", [False, True])
def test_gaudi_mla_and_not_by_class_path(capsys, tmp_path, installed):
    plugin = gaudi_plugin(tmp_path / "gaudi", installed=installed)
    for mla, path in GAUDI_BACKENDS.items():
        got = _select(capsys, plugin, "hpu", *(["--mla"] if mla else []))
        assert (got["selected"], got["class_path"], got["assumptions"]) == (
            "CUSTOM", path, []
        )  # fmt: skip


def test_a_plugin_platform_needs_its_plugin(capsys):
    assert main(["select", "--root", str(DEMO_TREE), "--platform", "hpu", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "argument --platform: invalid platform 'hpu'" in err


@pytest.mark.parametrize(
    ("name", "text", "found"),
    [
        ("requirements.txt", "torch\nvllm==0.31.0\n", ("0.31.0", "requirements.txt")),
        ("Dockerfile", "RUN pip install vllm-ascend==0.30.1\n", None),
        ("Dockerfile", "FROM vllm/vllm-openai:v0.30.1\n", ("0.30.1", "Dockerfile")),
        ("docs/source/conf.py", 'vllm = "v0.29.0"\n', ("0.29.0", "docs/source/conf.py")),
        ("requirements.txt", "# vllm==0.1.0\ntorch\n", None),
    ],
)
def test_the_release_a_plugin_targets(tmp_path, name, text, found):
    from sphinxext_attn.analysis.plugin_release import targeted_release

    plugin = gaudi_plugin(tmp_path / "gaudi")
    (plugin / name).parent.mkdir(parents=True, exist_ok=True)
    (plugin / name).write_text(text, encoding="utf-8")
    assert targeted_release(plugin) == found


def test_a_release_mismatch_is_one_warning(tmp_path, capsys):
    tree = tmp_path / "vllm-0.32.0"
    import shutil

    shutil.copytree(DEMO_TREE, tree)
    plugin = gaudi_plugin(tmp_path / "gaudi")
    (plugin / "requirements.txt").write_text("vllm==0.31.0\n", encoding="utf-8")
    args = ["select", "--root", str(tree), "--plugin", str(plugin), "--platform", "hpu"]
    assert main([*args, "--no-cache"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [f"warning: {plugin}: vllm_gaudi targets vLLM 0.31.0 (requirements.txt), "
                   "the tree is vLLM 0.32.0"]  # fmt: skip


DECLARING = """
    supported_kv_cache_dtypes = ["auto", "fp8"]

    @staticmethod
    def get_impl_cls():
        return AscendImpl


class AscendImpl:
    can_return_lse_for_decode = True
"""


def test_a_cell_is_declared_by_what_vllms_method_reads_or_the_impl_attribute(tmp_path):
    """KV Dtypes: the attribute vLLM's ``supports_kv_cache_dtype`` reads, set by the
    plugin's class; DCP: the impl class's attribute vLLM asked before the backend had
    the question. Neither cell is 'not declared' then; the other classes' are.

    Equivalent mutant: in ``note_undeclared``, ``assumed or COLUMN[title].text(row)``
    -> ``and``: its one caller passes ``undeclared()``'s cells, each of which is
    ``column.text(row)`` already."""
    plugin = ascend_plugin(tmp_path / "vllm-ascend")
    module = plugin / "vllm_ascend/attention/attention_v1.py"
    module.write_text(module.read_text(encoding="utf-8") + DECLARING, encoding="utf-8")
    plugins = read_plugins(DEMO_TREE, [str(plugin)])
    environment = Environment(platform="npu")
    key = AnalysisKey(str(DEMO_TREE), environment=environment, part="features", plugins=plugins)
    part = analyze(key)
    rows = {r.class_path: r for r in part.backends}
    mine = rows[ASCEND_BACKENDS[(False, False, False)]]
    assert "DCP" not in mine.undeclared and "KV Dtypes" not in mine.undeclared
    assert mine.cell("DCP") == "✅" and mine.cell("KV Dtypes") == "auto, fp8"
    assert {"Dtypes", "Head Sizes"} <= set(mine.undeclared)
    other = rows[ASCEND_BACKENDS[(True, False, False)]]
    assert {"DCP", "KV Dtypes"} <= set(other.undeclared)
