"""What an answer assumes about the world outside the tree: environment variables,
engine options and machine facts, each settable, each reported where it is read."""

from __future__ import annotations

import json

import pytest
from runtime_trees import runtime_backend
from treebuilder import dedent

from sphinxext_attn.analysis import analyze
from sphinxext_attn.cli.main import main
from sphinxext_attn.model.environment import (
    EnvironmentError_,
    case_environment,
    environment_from,
    parse_assignments,
)

HEADER = """
import os
import shutil
import importlib.util
"""
SINK_BY_ENV = """
@classmethod
def supports_sink(cls):
    return os.getenv("VLLM_MY_SINK", "0") == "1"

@classmethod
def supports_mm_prefix(cls):
    return importlib.util.find_spec("my_cubins") is not None

@classmethod
def is_sparse(cls):
    return shutil.which("nvcc") is not None
"""


def _row(root, **environment):
    analysis = analyze(root, environment=environment_from(**environment))
    return next(r for r in analysis.backends if r.name == "MY_ATTN")


def test_an_environment_variable_is_read_as_set_and_reported(tmp_path):
    root = runtime_backend(tmp_path, dedent(SINK_BY_ENV), header=HEADER)
    row = _row(root)
    assert row.supports_sink is False
    assert row.assumptions["Sink"] == ("VLLM_MY_SINK=unset",)
    row = _row(root, env={"VLLM_MY_SINK": "1"})
    assert row.supports_sink is True
    assert row.assumptions["Sink"] == ("VLLM_MY_SINK=1",)


def test_machine_facts_have_defaults_and_can_be_assumed(tmp_path):
    root = runtime_backend(tmp_path, dedent(SINK_BY_ENV), header=HEADER)
    row = _row(root)
    # only probed for, never imported: not installed on the reference machine
    assert row.supports_mm_prefix is False
    assert row.assumptions["MM Prefix"] == ("installed.my_cubins=false",)
    assert row.is_sparse is True  # nvcc is on the reference machine's PATH
    assert row.assumptions["Sparse"] == ("which.nvcc=true",)
    row = _row(root, assume={"installed.my_cubins": "true", "which.nvcc": "false"})
    assert row.supports_mm_prefix is True and row.is_sparse is False


def test_a_function_of_the_tree_can_be_assumed(tmp_path):
    body = """
    @classmethod
    def supports_sink(cls):
        return has_fancy_kernels()
    """
    header = """
    import fancy

    def has_fancy_kernels():
        return fancy.kernel_count() > 0
    """
    root = runtime_backend(tmp_path, dedent(body), header=dedent(header))
    row = _row(root)
    assert "Sink" in row.unknown  # a call into the installed package: not static
    row = _row(root, assume={"has_fancy_kernels": "true"})
    assert row.supports_sink is True
    assert row.assumptions["Sink"] == ("has_fancy_kernels=true",)


def test_a_feature_probe_of_an_installed_package_finds_the_feature(tmp_path):
    """``inspect.signature(f).parameters``: the pinned dependency has what the release
    probes for (``features.PACKAGE``, default true), unless assumed otherwise."""
    body = """
    @classmethod
    def supports_sink(cls):
        return has_fancy_kernels()
    """
    header = """
    import inspect
    import fancy

    def has_fancy_kernels():
        params = inspect.signature(fancy.run).parameters
        return "scale" in params and params["scale"].kind is inspect.Parameter.KEYWORD_ONLY
    """
    root = runtime_backend(tmp_path, dedent(body), header=dedent(header))
    row = _row(root)
    assert row.supports_sink is True
    assert row.assumptions["Sink"] == ("installed.fancy=true", "features.fancy=true")
    row = _row(root, assume={"features.fancy": "false"})
    assert row.supports_sink is False
    assert row.assumptions["Sink"] == ("installed.fancy=true", "features.fancy=false")
    row = _row(root, assume={"has_fancy_kernels": "false"})
    assert row.supports_sink is False and row.assumptions["Sink"] == ("has_fancy_kernels=false",)


def test_settings_are_checked_and_name_what_is_wrong():
    assert parse_assignments("A=1, B = x", ":env:") == {"A": "1", "B": "x"}
    with pytest.raises(EnvironmentError_, match=r"^:env: 'A' is not NAME=VALUE"):  # one colon
        parse_assignments("A", ":env:")
    with pytest.raises(EnvironmentError_, match="'1BAD' is not a valid name"):
        environment_from(env={"1BAD": "x"})
    with pytest.raises(EnvironmentError_, match="platform: 'metal' is not one of cuda, rocm"):
        environment_from(platform="metal")
    assert environment_from(env={"X": True}).env == {"X": "1"}


def test_a_case_carries_its_own_environment():
    base = environment_from(env={"VLLM_A": "1"})
    case = {"env": {"VLLM_B": "0"}, "aiter_installed": True, "platform": "rocm", "arch": "gfx942"}
    got = case_environment(case, base, 0)
    assert got.env == {"VLLM_A": "1", "VLLM_B": "0"}
    assert got.assume == {"installed.aiter": "1"}
    assert (got.platform, got.arch) == ("rocm", "gfx942")
    with pytest.raises(EnvironmentError_, match="case 3: 'env' and 'assume' must be objects"):
        case_environment({"env": ["x"]}, base, 3)


def test_the_command_line_reports_and_checks_the_environment(tmp_path, capsys):
    root = runtime_backend(tmp_path, dedent(SINK_BY_ENV), header=HEADER)
    base = ["--root", str(root), "--no-cache", "--format", "json", "-o", "-"]
    assert main([*base, "--env", "VLLM_MY_SINK=1"]) == 0
    data = json.loads(capsys.readouterr().out)
    row = next(b for b in data["backends"] if b["name"] == "MY_ATTN")
    assert row["supports_sink"] is True
    assert row["assumptions"]["Sink"] == {"VLLM_MY_SINK": "1"}
    assert main([*base, "--env", "NOVALUE"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["sphinxext-attn: --env: 'NOVALUE' is not NAME=VALUE"]
