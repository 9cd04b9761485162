"""Every bad command-line value: exit 2 and one line naming the flag (or case key),
the value and what is accepted; never a traceback, never silently accepted
(issue 24, item 2). The values are checked by the converters the directives use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import vllm_trees
from attn_sphinx_util import MINI_TREE

from sphinxext_attn.cli.main import main
from sphinxext_attn.selection import inputs

CASE = {"config": {"head_size": 128, "dtype": "bf16"}, "capability": "9.0"}
#: ``--cases`` contents -> words the message must hold (case index, key, value).
BAD_CASES: dict[str, tuple[object, tuple[str, ...]]] = {
    "not-a-list": ({"config": {}}, ("not a JSON list",)),
    "strings": (["a", "b"], ("case 0", "'a'", "not an object")),
    "numbers": ([CASE, 3], ("case 1", "3", "not an object")),
    "null-case": ([None], ("case 0", "None")),
    "misspelt-key": ([CASE, {**CASE, "capabilty": "9.0"}], ("case 1", "'capabilty'", "keys are")),
    "capability-in-config": (
        [{"config": {"capability": "9.0"}}],
        ("case 0", "'capability'", "key of the case"),
    ),
    "unknown-config-key": ([{"config": {"head_sise": 64}}], ("case 0", "'head_sise'", "dtype")),
    "config-not-object": ([{"config": [1]}], ("case 0", "config", "not an object")),
    "bad-capability": ([{**CASE, "capability": "hopper"}], ("case 0", "capability", "hopper")),
    "bad-head-size": ([{"config": {"head_size": -8}}], ("case 0", "head_size", "-8")),
    "bool-head-size": ([{"config": {"head_size": True}}], ("case 0", "head_size", "True")),
    "bad-dtype": ([{"config": {"dtype": "int4"}}], ("case 0", "dtype", "int4", "bf16")),
    "bad-flag": ([{"config": {"use_mla": "yes"}}], ("case 0", "use_mla", "true or false")),
    "bad-num-heads": ([{**CASE, "num_heads": 0}], ("case 0", "num_heads", "positive")),
    "bad-platform": ([{**CASE, "platform": "metal"}], ("case 0", "platform", "metal", "rocm")),
    "bad-env": ([{**CASE, "env": ["VLLM_X"]}], ("case 0", "env", "NAME: VALUE")),
    "bad-attn-type": ([{"config": {"attn_type": "SIDEWAYS"}}], ("case 0", "attn_type", "decoder")),
}
#: ``select`` flags -> words the message must hold.
BAD_FLAGS: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "capability-word": (["--capability", "abc"], ("--capability", "'abc'", "MAJOR.MINOR")),
    "capability-int": (["--capability", "9"], ("--capability", "'9'", "9.0")),
    "head-size-negative": (["--head-size", "-1"], ("--head-size", "'-1'", "positive")),
    "head-size-zero": (["--head-size", "0"], ("--head-size", "'0'", "positive")),
    "head-size-word": (["--head-size", "big"], ("--head-size", "'big'", "positive")),
    "block-size-negative": (["--block-size", "-5"], ("--block-size", "'-5'", "positive")),
    "num-heads-zero": (["--num-heads", "0"], ("--num-heads", "'0'", "positive")),
    "dtype": (["--dtype", "float8"], ("--dtype", "'float8'", "bf16")),
    "kv-cache-dtype-shape": (["--kv-cache-dtype", "fp8!"], ("--kv-cache-dtype", "'fp8!'")),
    "kv-cache-dtype-release": (
        ["--kv-cache-dtype", "bogus"],
        ("--kv-cache-dtype", "'bogus'", "auto", "fp8"),
    ),
    "attn-type": (["--attn-type", "sideways"], ("--attn-type", "'sideways'", "decoder")),
    "arch": (["--arch", "nvidia"], ("--arch", "'nvidia'", "gfx942")),
    "format": (["--format", "yaml"], ("--format", "'yaml'", "json")),
    "unknown-flag": (["--capabilty", "9.0"], ("--capabilty",)),
    "platform": (["--platform", "metal"], ("--platform", "'metal'", "rocm")),
}


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
    except SystemExit as exc:  # argparse's errors
        return int(exc.code or 0)


@pytest.mark.parametrize("name", sorted(BAD_CASES))
def test_bad_cases_file(name, tmp_path, capsys):
    content, words = BAD_CASES[name]
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(content))
    line = one_line(capsys, run(["select", "--root", str(MINI_TREE), "--cases", str(cases)]))
    assert line.startswith("sphinxext-attn select: --cases ")
    for word in words:
        assert word in line, line


@pytest.mark.parametrize("name", sorted(BAD_FLAGS))
def test_bad_select_flag(name, capsys):
    args, words = BAD_FLAGS[name]
    line = one_line(capsys, run(["select", "--root", str(MINI_TREE), "--no-cache", *args]))
    for word in words:
        assert word in line, line


def test_unreadable_cases_file(tmp_path, capsys):
    (tmp_path / "bad.json").write_text("[{")
    line = one_line(
        capsys, run(["select", "--root", str(MINI_TREE), "--cases", str(tmp_path / "bad.json")])
    )
    assert "--cases" in line and "cannot read" in line
    line = one_line(capsys, run(["select", "--root", str(MINI_TREE), "--cases", "/no/such"]))
    assert "/no/such" in line


@pytest.mark.parametrize("command", [[], ["select"]], ids=["page", "select"])
def test_root_missing_and_root_not_a_tree_differ(tmp_path, capsys, command):
    missing = one_line(capsys, run([*command, "--root", str(tmp_path / "nowhere"), "-o", "-"]))
    assert "nowhere: no such folder" in missing
    not_tree = one_line(capsys, run([*command, "--root", str(tmp_path), "-o", "-"]))
    assert f"{tmp_path}: not a vLLM tree" in not_tree and "vllm/" in not_tree
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    assert "not a folder" in one_line(capsys, run([*command, "--root", str(a_file)]))


@pytest.mark.parametrize("command", [[], ["select"]], ids=["page", "select"])
def test_output_to_a_folder_or_unwritable(tmp_path, capsys, command):
    line = one_line(capsys, run([*command, "--root", str(MINI_TREE), "-o", str(tmp_path)]))
    assert f"-o {tmp_path}: is a folder" in line
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder should be")
    target = blocker / "page.md"
    line = one_line(capsys, run([*command, "--root", str(MINI_TREE), "-o", str(target)]))
    assert str(target) in line and "not a folder" in line


@pytest.mark.parametrize("command", [[], ["select"]], ids=["page", "select"])
def test_output_in_folders_not_made_yet_is_written(tmp_path, capsys, command):
    """``-o new/sub/page.md`` under a folder that may be written: its nearest folder
    that exists is checked and the rest are made (cli sample 61: ``parent !=
    parent.parent`` -> ``is`` stopped at ``new/sub`` and called it no folder)."""
    target = tmp_path / "new" / "sub" / "page.md"
    assert run([*command, "--root", str(MINI_TREE), "-o", str(target)]) == 0
    assert target.read_text(encoding="utf-8")
    assert "not a folder" not in capsys.readouterr().err


def test_output_read_only_file(tmp_path, capsys, monkeypatch):
    """A file its mode makes read-only. Root may write any file, so ``os.access``
    answers from the mode bits as for another user: the check runs as root too (CI)."""
    out = tmp_path / "page.md"
    out.write_text("")
    out.chmod(0o444)
    real_access = os.access

    def access(path, mode, **kwargs):
        if Path(path) == out and mode & os.W_OK:
            return bool(out.stat().st_mode & 0o222)
        return real_access(path, mode, **kwargs)

    monkeypatch.setattr("sphinxext_attn.cli.checks.os.access", access)
    line = one_line(capsys, run(["--root", str(MINI_TREE), "-o", str(out)]))
    assert "not writable" in line


@pytest.mark.parametrize("links", ["{bogus}", "{line[0]}", "{path.x}"])
def test_page_command_bad_template_and_links_fail_before_analysis(tmp_path, capsys, links):
    """An unknown field, or an index or attribute of a known one (``str.format``'s
    TypeError and AttributeError), is one line and exit 2, not a traceback."""
    line = one_line(capsys, run(["--root", str(MINI_TREE), "--template", str(tmp_path / "t")]))
    assert "--template" in line and "cannot read" in line
    line = one_line(capsys, run(["--root", str(MINI_TREE), "--source-links", links]))
    assert f"--source-links {links}" in line and "{path}" in line


def test_page_command_bad_flags(tmp_path, capsys):
    line = one_line(capsys, run(["--root", str(MINI_TREE), "--profile", "exact"]))
    assert "--profile" in line and "'exact'" in line and "runtime" in line
    line = one_line(capsys, run(["--root", str(MINI_TREE), "--diff", str(tmp_path / "gone")]))
    assert "--diff" in line and "no such folder" in line
    line = one_line(capsys, run(["--root", str(MINI_TREE), "--diff", str(tmp_path)]))
    assert "--diff" in line and "not a vLLM tree" in line


def test_recorded_answers_and_new_inputs_are_accepted(tmp_path, capsys):
    """The keys of the ROCm case files are inputs (or a recorded answer): no error."""
    case = {
        **CASE,
        "config": {**CASE["config"], "use_kv_connector": False, "block_size": None},
        "platform": "cuda",
        "arch": None,
        "env": {},
        "assume": {},
        "aiter_installed": None,
        "model_attn_type": None,
        "num_heads": None,
        "selected": "FLASH_ATTN",
        "priorities": [],
        "rejected": {},
        "aiter": {"is_mha_enabled": False},
    }
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([case]))
    assert main(["select", "--root", str(MINI_TREE), "--no-cache", "--cases", str(cases)]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 1


def test_every_case_key_has_a_check():
    """One table: the keys SPEC.md names are the checked keys (the integrator's flags plug in)."""
    assert set(inputs.CASE_KEYS) == {
        "config", "capability", "num_heads", "platform", "arch", "env", "assume",
        "aiter_installed", "model_attn_type", "selected_backend", "model_config",
    }  # fmt: skip
    assert "use_kv_connector" in inputs.CONFIG_KEYS
    assert set(inputs.RECORDED_KEYS) == {
        "selected", "priorities", "rejected", "aiter", "error", "selected_backend_ignored", "log",
    }  # fmt: skip


@pytest.mark.realtree
def test_the_shipped_case_files_are_valid():
    """vLLM's automatic-selection case files (the requested-* ones ask for a backend,
    a case key `select --cases` does not take yet)."""
    folder = vllm_trees.shared_dir() / "vllm" / "select"
    files = sorted([*folder.glob("select-*.json"), *folder.glob("rocm-*.json")])
    assert len(files) >= 7, folder
    for path in files:
        inputs.check_cases(json.loads(path.read_text()))


def test_in_a_real_process_no_traceback(tmp_path):
    """The installed command: one line on stderr, exit 2."""
    proc = subprocess.run(
        [sys.executable, "-m", "sphinxext_attn", "select", "--root", str(MINI_TREE)]
        + ["--head-size", "-1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "--head-size" in proc.stderr and "'-1'" in proc.stderr


def test_count_of_distinct_bad_inputs():
    """The issue's target: at least 30 distinct bad inputs are tested here."""
    assert len(BAD_CASES) + len(BAD_FLAGS) + 12 >= 30


def test_every_flag_says_its_default():
    from sphinxext_attn.cli.main import build_parser
    from sphinxext_attn.cli.select import build_parser as select_parser

    for parser in (build_parser(), select_parser()):
        for action in parser._actions:
            if action.dest != "help":
                assert "default" in (action.help or ""), (parser.prog, action.option_strings)


def test_an_output_named_like_a_flag_is_still_checked(tmp_path, monkeypatch):
    """Only ``-`` itself is stdout: a folder named ``+out`` (or ``,``) is refused."""
    from sphinxext_attn.cli.checks import BadInput, check_output

    monkeypatch.chdir(tmp_path)
    for name in ("+out", ","):
        (tmp_path / name).mkdir()
        with pytest.raises(BadInput, match="is a folder"):
            check_output(name)
    check_output("-")
    check_output("")
    check_output(None)
