"""The platform and plugin flags (cli/environment_flags.py): a platform name that
cannot be one, a list of platforms with ``all``, and a ``--plugin`` folder that
holds no plugin, each refused in one line before any work."""

from __future__ import annotations

import argparse

import pytest
from treebuilder import DEMO_TREE

from sphinxext_attn.cli.environment_flags import platform_list, platform_name
from sphinxext_attn.cli.main import main
from sphinxext_attn.model.environment import PLATFORMS


def test_a_platform_name_is_a_lowercase_word():
    assert platform_name(" ROCm ") == "rocm"
    assert platform_name("my_npu2") == "my_npu2"
    for bad in ("two words", "9npu", ""):
        with pytest.raises(argparse.ArgumentTypeError, match=f"invalid platform {bad!r}"):
            platform_name(bad)


def test_a_list_of_platforms_is_comma_separated_or_all():
    assert platform_list("all") == list(PLATFORMS)
    assert platform_list(" ALL ") == list(PLATFORMS)
    assert platform_list("rocm, xpu,") == ["rocm", "xpu"]
    for bad in ("", ",", "rocm,two words"):
        with pytest.raises(argparse.ArgumentTypeError, match="comma-separated or repeated"):
            platform_list(bad)


@pytest.mark.parametrize("command", [["select"], []], ids=["select", "page"])
def test_a_plugin_folder_that_is_not_there_is_one_line(tmp_path, capsys, command):
    missing = tmp_path / "nothing-here"
    argv = [*command, "--root", str(DEMO_TREE), "--plugin", str(missing), "--no-cache"]
    assert main([*argv, "-o", "-"] if not command else argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"--plugin {missing}: not a folder, nor an installed distribution" in err
