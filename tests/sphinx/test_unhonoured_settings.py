"""conf.py settings and directive options that were accepted and then ignored
(issue 35): each is now one Sphinx error naming the setting or option."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from attn_sphinx_util import MINI_TREE, sphinx_project
from configured_tree import CONFIG_FILES
from sphinx.cmd.build import build_main


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("configured") / "tree"
    shutil.copytree(MINI_TREE, root)
    for rel, text in CONFIG_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _build(tmp_path: Path, capsys, tree: Path, page: str, settings: str = "") -> str:
    conf = (
        f"attention_backends_root = {str(tree)!r}\n"
        'attention_backends_profile = "vllm-page"\n' + settings + "\n"
    )
    src = sphinx_project(tmp_path, {"index": "Index\n=====\n\n" + page}, conf)
    build_main(["-q", "-b", "html", str(src), str(tmp_path / "out")])
    text = capsys.readouterr().err
    assert "Traceback" not in text and "Extension error" not in text, text
    return text


STANDARD = ".. attention-backends-standard::\n"


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        (
            "attention_backends_assume = {'network': 'maybe'}",
            ("attention_backends_assume", "'maybe' is not a value of network", "true or false"),
        ),
        (
            "attention_backends_assume = {'which.nvcc': 'perhaps'}",
            ("attention_backends_assume", "which.nvcc"),
        ),
        (
            "attention_backends_options = {'no.such.field': 1}",
            ("attention_backends_options no.such.field=1", "VllmConfig has no field 'no'"),
        ),
        (
            "attention_backends_options = {'attention_config.flash_attn_version': 7}",
            ("attention_backends_options", "accepts 2, 3 or None"),
        ),
    ],
)
def test_a_conf_setting_that_would_be_ignored(tmp_path, capsys, tree, settings, words):
    text = _build(tmp_path, capsys, tree, STANDARD, settings)
    assert text.count("ERROR") == 1, text
    for word in words:
        assert word in text, text


@pytest.mark.parametrize(
    ("page", "words"),
    [
        (
            STANDARD + "   :option: no.such.field=1\n",
            (":option: no.such.field=1", "VllmConfig has no field 'no'"),
        ),
        (
            STANDARD + "   :option: cache_config.cache_dtype=fp9\n",
            ("'fp9' is not a value of cache_config.cache_dtype", "'auto', 'fp8'"),
        ),
        (
            ".. attention-backends-select::\n   :arch: gfx942\n",
            (":arch: gfx942 names a ROCm GPU, but the platform is cuda", ":platform: rocm"),
        ),
        (
            ".. attention-backends-select::\n   :platform: rocm\n   :capability: 9.0\n",
            (":capability: 9.0 does not apply on rocm", ":arch:"),
        ),
        (
            ".. attention-backends-select:: 9.0 bf16\n",
            ("takes no argument (got '9.0 bf16')", ":capability: 9.0"),
        ),
        (
            STANDARD + "   :env: NOEQUALS\n",
            (":env: 'NOEQUALS' is not NAME=VALUE",),
        ),
        (
            STANDARD + "   :assume: network=maybe\n",
            (":assume: network=maybe: 'maybe' is not a value of network",),
        ),
    ],
)
def test_a_directive_option_that_would_be_ignored(tmp_path, capsys, tree, page, words):
    text = _build(tmp_path, capsys, tree, page)
    assert text.count("ERROR") == 1, text
    assert not any(f":{kind}::" in text for kind in ("env", "option", "assume"))  # one colon
    for word in words:
        assert word in text, text


def test_good_options_build_cleanly(tmp_path, capsys, tree):
    page = STANDARD + "   :option: attention_config.flash_attn_version=3\n"
    settings = "attention_backends_options = {'cache_config.cache_dtype': 'fp8'}"
    text = _build(tmp_path, capsys, tree, page, settings)
    assert "ERROR" not in text, text
