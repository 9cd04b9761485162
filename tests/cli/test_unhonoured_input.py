"""Inputs that were accepted and then ignored (issue 35): each is now exit 2 and one
line naming the input and what is accepted. Engine options are checked against the
config classes of a small vLLM-shaped tree (its own ``vllm/config``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import vllm_trees
from attn_sphinx_util import MINI_TREE
from configured_tree import CONFIG_FILES

from sphinxext_attn.cli.main import main


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("configured") / "tree"
    shutil.copytree(MINI_TREE, root)
    for rel, text in CONFIG_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def one_line(capsys, code: int) -> str:
    out = capsys.readouterr()
    assert code == 2, out
    lines = out.err.strip().splitlines()
    assert len(lines) == 1, out.err
    assert "Traceback" not in out.err and out.out == ""
    return lines[0]


def run(args: list[str]) -> int:
    try:
        return main(args)
    except SystemExit as exc:
        return int(exc.code or 0)


#: ``--option`` -> the words its one line must hold
BAD_OPTIONS: dict[str, tuple[str, ...]] = {
    "no.such.field=3": (
        "--option no.such.field=3",
        "VllmConfig has no field 'no'",
        "cache_config",
    ),
    "attention_config.nope=1": ("AttentionConfig has no field 'nope'", "flash_attn_version"),
    "attention_config.flash_attn_version=7": ("'7' is not a value", "accepts 2, 3 or None"),
    "attention_config.flash_attn_version=two": ("'two' is not a value", "2, 3"),
    "attention_config.backend=FLASHINFER": ("attention_config.backend", "--backend"),
    "attention_config.use_trtllm_attention=maybe": ("'maybe'", "true or false or None"),
    "attention_config.max_splits=3.5": ("'3.5'", "an integer"),
    "attention_config.max_splits=true": ("'true'", "an integer"),
    "cache_config.cache_dtype=fp9": ("'fp9'", "'auto', 'fp8'"),
    "cache_config.block_size=big": ("'big'", "an integer"),
    "attention_config=3": ("attention_config is a config (AttentionConfig)", ".FIELD=VALUE"),
    "speculative_config.method=x": ("speculative_config is not a config class by default",),
    "level=O3": ("'O3'", "O0, O2, _310P"),
}


@pytest.mark.parametrize("option", sorted(BAD_OPTIONS))
@pytest.mark.parametrize("command", [["select"], ["-o", "-"]], ids=["select", "page"])
def test_an_option_the_config_does_not_honour(tree, capsys, option, command):
    line = one_line(capsys, run([*command, "--root", str(tree), "--no-cache", "--option", option]))
    assert f"--option {option}:" in line
    for word in BAD_OPTIONS[option]:
        assert word in line, line


@pytest.mark.parametrize(
    "option",
    [
        "attention_config.flash_attn_version=3",
        "attention_config.use_trtllm_attention=false",
        "attention_config.use_trtllm_attention=none",
        "cache_config.cache_dtype=fp8",
        "level=_310P",
        "level=O0",
    ],
)
def test_an_option_the_config_honours_is_accepted(tree, capsys, option):
    assert run(["select", "--root", str(tree), "--no-cache", "--option", option]) == 0
    assert capsys.readouterr().out.startswith("configuration:")


def test_a_tree_without_an_engine_config_takes_no_option(capsys):
    line = one_line(
        capsys, run(["select", "--root", str(MINI_TREE), "--option", "a.b=1", "--no-cache"])
    )
    assert "--option a.b=1: this tree has no VllmConfig" in line


#: ``select`` flags that do not apply where they are given -> words of the line
NOT_APPLYING: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "arch-on-cuda": (["--arch", "gfx942"], ("--arch gfx942", "platform is cuda", "rocm")),
    "arch-on-cpu": (["--platform", "cpu", "--arch", "gfx942"], ("platform is cpu",)),
    "capability-on-rocm": (
        ["--platform", "rocm", "--capability", "10.0"],
        ("--capability 10.0", "does not apply on rocm", "--arch"),
    ),
    "capability-on-cpu": (["--platform", "cpu", "--capability", "9.0"], ("on cpu",)),
    "capability-on-xpu": (["--platform", "xpu", "--capability", "9.0"], ("on xpu",)),
    "head-size-with-cases": (
        ["--cases", "cases.json", "--head-size", "64"],
        ("--head-size does not apply with --cases",),
    ),
    "mla-with-cases": (["--cases", "cases.json", "--mla"], ("--mla does not apply",)),
}


@pytest.mark.parametrize("name", sorted(NOT_APPLYING))
def test_a_flag_that_does_not_apply(name, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cases.json").write_text("[]")
    args, words = NOT_APPLYING[name]
    line = one_line(capsys, run(["select", "--root", str(MINI_TREE), "--no-cache", *args]))
    assert line.startswith("sphinxext-attn select: ")
    for word in words:
        assert word in line, line


@pytest.mark.parametrize("platform", ["xpu", "cpu"])
def test_a_capability_off_rocm_is_not_told_to_name_an_arch(platform, capsys):
    """Only ROCm names its GPU by ``--arch``; xpu (sorting after "rocm") is not sent
    there (``platform == "rocm"`` -> ``>=`` gave xpu the hint)."""
    args = ["select", "--root", str(MINI_TREE), "--no-cache", "--platform", platform]
    line = one_line(capsys, run([*args, "--capability", "9.0"]))
    assert line.endswith(
        f"--capability 9.0 does not apply on {platform} (its code derives its own)"
    )


#: ``--assume`` values that are not a fact's values
BAD_FACTS = ("network=maybe", "which.nvcc=perhaps", "installed.flashinfer_cubin=2")


@pytest.mark.parametrize("fact", BAD_FACTS)
@pytest.mark.parametrize("command", [["select"], ["-o", "-"]], ids=["select", "page"])
def test_an_assumption_that_is_not_true_or_false(capsys, fact, command):
    line = one_line(capsys, run([*command, "--root", str(MINI_TREE), "--assume", fact]))
    name, _, value = fact.partition("=")
    assert f"--assume {fact}: {value!r} is not a value of {name}" in line
    assert "true or false" in line


@pytest.mark.parametrize("word", ["selct", "selet", "slect"])
def test_a_mistyped_command(capsys, word, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = one_line(capsys, run([word]))
    assert line == (
        f"sphinxext-attn: unknown command {word!r} (did you mean select?); the commands "
        "are select, fetch, and the page command takes flags and existing FILES"
    )


def test_an_unknown_command_without_a_close_one(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = one_line(capsys, run(["frobnicate"]))
    assert "unknown command 'frobnicate';" in line and "did you mean" not in line


def test_files_given_to_the_page_command_are_still_files(tmp_path, monkeypatch, capsys):
    """The pre-commit hook's files: a path (existing or not) is no command."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "README").write_text("x")
    assert run(["README", "--root", str(MINI_TREE)]) == 0  # not relevant: nothing to do
    assert run(["docs/gone.md", "--root", str(MINI_TREE)]) == 0
    # a slash or a dot is enough to make a word a path
    assert run(["gone.md", "--root", str(MINI_TREE)]) == 0
    assert run(["docs/gone", "--root", str(MINI_TREE)]) == 0


@pytest.mark.parametrize("command", [[], ["select"]], ids=["page", "select"])
def test_a_root_whose_vllm_is_empty(tmp_path, capsys, command):
    (tmp_path / "vllm").mkdir()
    line = one_line(capsys, run([*command, "--root", str(tmp_path), "-o", "-"]))
    assert f"--root {tmp_path}: its vllm/ holds none of the files any table is read from" in line
    assert "vllm/v1/attention/backends/registry.py" in line and "vllm/platforms/cuda.py" in line
    (tmp_path / "vllm" / "platforms").mkdir()  # one source is enough: the tables it gives
    (tmp_path / "vllm" / "platforms" / "cuda.py").write_text("")
    assert run([*command, "--root", str(tmp_path), "-o", "-", "--no-cache"]) != 2


@pytest.mark.realtree
def test_an_arch_the_release_does_not_know_lists_the_known_ones(capsys):
    tree = vllm_trees.tree("0.34.0")
    args = ["select", "--root", str(tree), "--no-cache", "--platform", "rocm"]
    line = one_line(capsys, run([*args, "--arch", "gfx9999"]))
    assert line.startswith("sphinxext-attn select: --arch gfx9999: not a GPU this release's")
    assert "gfx942" in line and "gfx950" in line


@pytest.mark.realtree
def test_real_release_options(capsys):
    tree = str(vllm_trees.tree("0.34.0"))
    args = ["select", "--root", tree, "--no-cache", "--option"]
    line = one_line(capsys, run([*args, "attention_config.flash_attn_version=7"]))
    assert "'7' is not a value of attention_config.flash_attn_version" in line
    assert "accepts 2, 3, 4 or None" in line
    line = one_line(capsys, run([*args, "performance_mode=fast"]))
    assert "'balanced', 'interactivity', 'throughput'" in line
    assert run([*args, "attention_config.flash_attn_version=2"]) == 0


@pytest.mark.realtree
def test_platform_true_select_text(capsys):
    """ROCm shows its arch (the default marked) and the capability its code derives;
    CPU shows no capability."""
    tree = str(vllm_trees.tree("0.34.0"))
    assert run(["select", "--root", tree, "--no-cache", "--platform", "rocm"]) == 0
    text = capsys.readouterr().out
    assert "  arch:           gfx942  (default)" in text
    assert "  capability:     9.4 (derived from gfx942)\n" in text
    assert "9.0" not in text
    args = ["select", "--root", tree, "--no-cache", "--platform", "rocm", "--arch", "gfx950"]
    assert run(args) == 0
    text = capsys.readouterr().out
    assert "  arch:           gfx950\n" in text and "9.5 (derived from gfx950)" in text
    assert run(["select", "--root", tree, "--no-cache", "--platform", "cpu"]) == 0
    assert "capability" not in capsys.readouterr().out.split("selected:")[0]
