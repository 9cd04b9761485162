"""``select``'s output says everything it used (issue 24, item 6): the whole
configuration with defaults marked, one label per backend, and the
FlashAttention version the pick runs."""

from __future__ import annotations

import json
import re

import pytest
import vllm_trees

from sphinxext_attn.cli.main import main

pytestmark = pytest.mark.realtree
LABEL = re.compile(
    r"^ (->|  ) \d+\. (\S+)  (selected|rejected: .+|valid, lower priority|not evaluated: .+)$"
)


def test_text_labels_every_backend_and_marks_defaults(capsys):
    tree = vllm_trees.tree("0.33.0")
    args = ["select", "--root", str(tree), "--no-cache", "--capability", "10.0"]
    assert main([*args, "--head-size", "64", "--sink"]) == 0
    text = capsys.readouterr().out
    listed = text.split("priority list:\n")[1].splitlines()
    assert listed and all(LABEL.match(line) for line in listed), listed
    assert sum(" selected" in line for line in listed) == 1
    # the one line a reader looks for: the arrow marks the pick, and only it
    assert [line for line in listed if line.startswith(" -> ")] == [
        line for line in listed if line.endswith("  selected")
    ]
    assert "  capability:     10.0\n" in text  # given: no mark
    assert "  dtype:          bf16  (default)\n" in text
    assert "  sink:           yes\n" in text
    assert re.search(r"^FlashAttention: FA\d \(FLASH_ATTN runs it\)$", text, re.M), text


def test_json_echoes_the_configuration(capsys):
    tree = vllm_trees.tree("0.33.0")
    assert main(["select", "--root", str(tree), "--no-cache", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    config = data["configuration"]
    assert config["values"]["capability"] == "9.0" and config["values"]["head-size"] == 128
    assert {"capability", "dtype", "head-size", "platform"} <= set(config["defaults"])
    assert data["labels"][data["selected"]] == "selected"
    assert data["flash_attn_version"] == 3  # FA3 on Hopper


def test_a_backend_without_flash_attention_names_no_version(capsys):
    tree = vllm_trees.tree("0.33.0")
    args = ["select", "--root", str(tree), "--no-cache", "--format", "json"]
    assert main([*args, "--capability", "10.0", "--kv-cache-dtype", "fp8"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["selected"] and not data["selected"].startswith("FLASH_ATTN")
    assert data["flash_attn_version"] is None


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_an_unparsable_fa_utils_names_no_version_and_raises_nothing(tmp_path, capsys, fmt):
    """Found by the random edits of real files (issue 24, item 4): with the module of
    ``get_flash_attn_version`` broken, the FlashAttention version escaped as
    ``Unknown: module ... cannot be parsed``; it is now simply not named."""
    import shutil

    root = tmp_path / "t"
    shutil.copytree(vllm_trees.tree("0.16.0") / "vllm", root / "vllm")
    fa_utils = root / "vllm/v1/attention/backends/fa_utils.py"
    fa_utils.write_text(fa_utils.read_text(encoding="utf-8") + "\ndef (\n", encoding="utf-8")
    args = ["select", "--root", str(root), "--no-cache", "--format", fmt]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "FLASH_ATTN" in out
    if fmt == "json":
        data = json.loads(out)
        assert data["selected"] == "FLASH_ATTN" and data["flash_attn_version"] is None
    else:
        assert "selected: FLASH_ATTN" in out and "FlashAttention: FA" not in out
