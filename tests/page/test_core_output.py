"""MLA prefill detection, markdown and JSON output, and the command line,
on small invented vLLM-shaped trees (the rest of the seed's rules are in
test_core_rules.py)."""

from __future__ import annotations

import json

import pytest
from treebuilder import (
    DEFAULT_ENTRIES,
    MLA_ATTENTION,
    REGISTRY,
    analyze_page,
    build_tree,
    dedent,
    registry_source,
)

from sphinxext_attn.cli.main import main
from sphinxext_attn.render.markdown import render_markdown

MARKER = "## Backend Priority (CUDA)"
OLD_HOME = "vllm/v1/attention/backends/mla/common.py"


# -- MLA prefill --------------------------------------------------------------
def prefill(tmp_path, source: str | None) -> list[tuple[str, str]]:
    analysis = analyze_page(build_tree(tmp_path, {MLA_ATTENTION: source}))
    return [(p.cell("Backend"), p.compute_capability) for p in analysis.mla_prefill]


def test_prefill_all_selectors_in_order(tmp_path):
    assert prefill(tmp_path, build_tree(tmp_path).joinpath(MLA_ATTENTION).read_text()) == [
        ("TRT-LLM Ragged‡", "10.x"),
        ("FlashInfer", "10.x"),
        ("cuDNN", "10.x"),
        ("FlashAttention", "Any"),
    ]


def test_prefill_only_present_selectors(tmp_path):
    source = dedent("""
        def use_cudnn_prefill():
            return current_platform.is_device_capability_family(90)
        def use_flashinfer_prefill():
            return flag_only()
    """)
    assert prefill(tmp_path, source) == [("cuDNN", "9.x"), ("FlashAttention", "Any")]


def test_prefill_fallback_only(tmp_path):
    assert prefill(tmp_path, "x = 1\n") == [("FlashAttention", "Any")]


def test_prefill_selectors_in_their_older_home(tmp_path):
    """Before mla_attention.py, the selectors were in backends/mla/common.py."""
    source = build_tree(tmp_path / "new").joinpath(MLA_ATTENTION).read_text()
    tree = build_tree(tmp_path / "old", {MLA_ATTENTION: None, OLD_HOME: source})
    analysis = analyze_page(tree)
    assert [(p.cell("Backend"), p.source.path) for p in analysis.mla_prefill[:3]] == [
        ("TRT-LLM Ragged‡", OLD_HOME),
        ("FlashInfer", OLD_HOME),
        ("cuDNN", OLD_HOME),
    ]
    assert analysis.mla_prefill[3].cell("Backend") == "FlashAttention"
    assert not analysis.diagnostics


def test_prefill_table_in_markdown(tmp_path):
    page = render_markdown(analyze_page(build_tree(tmp_path)))
    mla = page.split("### Prefill Backends")[1].split("### Decode Backends")[0]
    assert "| Backend | Description | Compute Cap. | Enable | Disable | Notes |" in mla
    assert (
        "| FlashAttention | FlashAttention varlen (FA2/FA3) | Any | Default fallback "
        "| Use other backends | FA3 on SM90, FA2 otherwise |"
    ) in mla
    assert mla.index("TRT-LLM Ragged‡") < mla.index("| FlashInfer |") < mla.index("| cuDNN |")


# -- markdown -------------------------------------------------------------------
def test_no_standard_backends_found(tmp_path):
    entries = {"TRITON_MLA": DEFAULT_ENTRIES["TRITON_MLA"]}
    page = render_markdown(
        analyze_page(build_tree(tmp_path, {REGISTRY: registry_source(entries)}))
    )
    assert "## Standard Attention (MHA, MQA, GQA) Backends\n\nNo backends found.\n" in page
    assert "| `TRITON_MLA` | fp16, bf16 | `auto` | Any | 576 |" in page


def test_markdown_sections_in_seed_order(tmp_path):
    page = render_markdown(analyze_page(build_tree(tmp_path)))
    heads = [
        MARKER,
        "### Standard Attention (MHA, MQA, GQA)",
        "### MLA Attention (DeepSeek-style)",
        "## Legend",
        "## Standard Attention (MHA, MQA, GQA) Backends",
        "## MLA (Multi-head Latent Attention) Backends",
        "### Prefill Backends",
        "### Decode Backends",
    ]
    positions = [page.index(h) for h in heads]
    assert positions == sorted(positions)
    assert "| 1 | `FLASHINFER` |\n| 2 | `FLASH_ATTN` |\n| 3 | `TRITON_ATTN` |" in page
    assert page.endswith("|\n")


# -- JSON -----------------------------------------------------------------------
def test_json_shape(tmp_path, capsys):
    root = build_tree(tmp_path / "t")
    assert (
        main(["--profile", "vllm-page", "--root", str(root), "--format", "json", "-o", "-"]) == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert {"priorities", "backends", "mla_prefill", "footnotes", "diagnostics"} <= set(data)
    fa = [b for b in data["backends"] if b["name"] == "FLASH_ATTN"]
    assert [b["version"] for b in fa] == ["FA2*", "FA3*"]
    assert fa[0]["block_sizes"] == ["%16"] and fa[0]["table"] == "standard"
    mla = [b for b in data["backends"] if b["name"] == "TRITON_MLA"]
    assert mla[0]["table"] == "mla" and mla[0]["is_mla"] is True
    assert mla[0]["head_sizes"] == ["576"]
    prio = {(p["category"], p["arch"]): p["backends"] for p in data["priorities"]}
    assert prio[("mla", "sm100")] == ["TRITON_MLA"]
    assert [p["name"] for p in data["mla_prefill"]][-1] == "FlashAttention"
    assert data["diagnostics"] == []


def test_json_diagnostics(tmp_path, capsys):
    root = build_tree(tmp_path / "t", {"vllm/v1/attention/backends/flash_attn.py": "def (:\n"})
    assert (
        main(["--profile", "vllm-page", "--root", str(root), "--format", "json", "-o", "-"]) == 0
    )
    data = json.loads(capsys.readouterr().out)
    locations = [d["location"] or "" for d in data["diagnostics"]]
    assert any(loc.startswith("vllm/v1/attention/backends/flash_attn.py:1") for loc in locations)


# -- command line ---------------------------------------------------------------
@pytest.fixture
def root(tmp_path):
    return build_tree(tmp_path / "tree")


def test_cli_writes_default_output(root):
    assert main(["--profile", "vllm-page", "--root", str(root)]) == 0
    out = root / "docs/design/attention_backends.md"
    assert MARKER in out.read_text(encoding="utf-8")


def test_cli_check_exit_codes(root, tmp_path):
    out = tmp_path / "page.md"
    args = ["--root", str(root), "-o", str(out), "--check"]
    assert main(args) == 1  # missing: written, stale
    first = out.read_text(encoding="utf-8")
    assert MARKER in first
    assert main(args) == 0  # up to date
    out.write_text(first.replace("`TRITON_MLA`", "`OLD`"), encoding="utf-8")
    assert main(args) == 1
    assert out.read_text(encoding="utf-8") == first  # rewritten
    assert main(args) == 0


def test_cli_check_sees_source_change(root, tmp_path):
    out = tmp_path / "page.md"
    args = ["--root", str(root), "-o", str(out), "--check"]
    main(args)
    cuda = root / "vllm/platforms/cuda.py"
    cuda.write_text(cuda.read_text().replace("TRITON_ATTN", "FLEX_ATTENTION"))
    assert main(args) == 1
    assert "`FLEX_ATTENTION`" in out.read_text(encoding="utf-8")


def test_cli_files_filter_irrelevant(root, tmp_path):
    out = tmp_path / "page.md"
    rc = main(
        [
            "--profile",
            "vllm-page",
            "--root",
            str(root),
            "-o",
            str(out),
            "--check",
            "README.md",
            "vllm/config.py",
        ]
    )
    assert rc == 0
    assert not out.exists()


@pytest.mark.parametrize(
    "changed",
    [
        "vllm/platforms/cuda.py",
        "vllm/v1/attention/backends/flash_attn.py",
        "vllm/v1/attention/backends/mla/triton_mla.py",
        "vllm/model_executor/layers/attention/mla_attention.py",
    ],
)
def test_cli_files_filter_relevant(root, tmp_path, changed):
    out = tmp_path / "page.md"
    assert (
        main(
            [
                "--profile",
                "vllm-page",
                "--root",
                str(root),
                "-o",
                str(out),
                "--check",
                "README.md",
                changed,
            ]
        )
        == 1
    )
    assert out.exists()


def test_cli_stdout(root, capsys):
    assert main(["--profile", "vllm-page", "--root", str(root), "-o", "-"]) == 0
    text = capsys.readouterr().out
    assert MARKER in text and "| `TRITON_MLA` |" in text
    assert not (root / "docs").exists()


def test_cli_template_keeps_prose(root, tmp_path, capsys):
    template = tmp_path / "template.md"
    prose = "# Our Backends\n\nHand-written intro, kept verbatim.\n\n"
    template.write_text(prose + MARKER + "\n\nstale generated text\n", encoding="utf-8")
    assert (
        main(
            ["--profile", "vllm-page", "--root", str(root), "--template", str(template), "-o", "-"]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert text.startswith(prose.rstrip("\n"))
    assert text.count(MARKER) == 1
    assert "stale generated text" not in text
    generated = text[text.index(MARKER) :]
    # the generated part is the page's own, from the marker on (what -o - without a
    # template writes), with the mini tree's rows in it
    assert main(["--profile", "vllm-page", "--root", str(root), "-o", "-"]) == 0
    plain = capsys.readouterr().out
    assert generated == plain[plain.index(MARKER) :]
    assert "| 1 | `FLASH_ATTN` |" in generated and "| `TRITON_MLA` |" in generated
    assert "### Prefill Backends" in generated


def test_cli_check_keeps_the_pages_own_prose(root, tmp_path):
    """--check takes the existing page as its template: its prose is never replaced."""
    out = tmp_path / "page.md"
    prose = "# Our Backends\n\nHand-written intro, kept verbatim.\n\n"
    out.write_text(prose + MARKER + "\n\nstale generated text\n", encoding="utf-8")
    args = ["--profile", "vllm-page", "--root", str(root), "-o", str(out), "--check"]
    assert main(args) == 1
    text = out.read_text(encoding="utf-8")
    assert text.startswith(prose.rstrip("\n") + "\n\n" + MARKER)
    assert "stale generated text" not in text and "| `TRITON_MLA` |" in text
    assert main(args) == 0
    assert out.read_text(encoding="utf-8") == text


def test_cli_warnings_on_stderr(tmp_path, capsys):
    root = build_tree(tmp_path / "t", {"vllm/v1/attention/backends/triton_attn.py": None})
    assert main(["--profile", "vllm-page", "--root", str(root), "-o", "-"]) == 0
    captured = capsys.readouterr()
    assert "vllm/v1/attention/backends/" in captured.err
    assert "\n| `TRITON_ATTN` |" not in captured.out
    assert "\n| `FLASH_ATTN` |" in captured.out and "| 3 | `TRITON_ATTN` |" in captured.out


def test_cli_no_vllm_package(tmp_path, capsys):
    empty = tmp_path / "empty"  # the message names the root (a path holding "vllm" itself)
    empty.mkdir()
    assert main(["--profile", "vllm-page", "--root", str(empty), "-o", "-"]) != 0
    err = capsys.readouterr().err
    assert str(empty) in err and "no vllm/ package" in err, err


def test_core_stands_alone():
    """The analysis core imports neither Sphinx, docutils nor the render layer."""
    import subprocess
    import sys

    code = (
        "import sys, sphinxext_attn.analysis.pipeline;"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('sphinx', 'docutils')"
        " or m.startswith('sphinxext_attn.render') or m.startswith('sphinxext_attn.sphinx')];"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
