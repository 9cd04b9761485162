"""vLLM's ``gen:`` marker pages (0.27 on): filled as its docs build fills them, and
never written over by the command line or the pre-commit hook."""

from __future__ import annotations

import functools

import pytest
from treebuilder import build_tree, dedent

from sphinxext_attn.analysis.pipeline import analyze
from sphinxext_attn.cli.main import main
from sphinxext_attn.render import markers
from sphinxext_attn.render.markdown import fill_markers

analyze = functools.partial(analyze, profile="vllm-page")

MKDOCS = "docs/mkdocs/gen_files/generate_attention_backends.py"
PAGE = "docs/design/attention_backends.md"
KEYS = ("priority-standard", "priority-mla", "table-standard", "table-mla-decode")
GENERATOR = dedent(
    """
    def _priority_table(title, backends, annotations=None):
        return ["| Priority | Backend |", "| -------- | ------- |"]

    def _render_table(columns, backends):
        return [row.replace("  ", " ") for row in rows]

    def build_blocks():
        mla_sm100_annotations = {"TRITON_MLA": "**\\\\***"}
        return {
    """
    + "".join(f'        "{key}": block(),\n' for key in KEYS)
    + """        }

    fill_markers("design/attention_backends.md", build_blocks())
    """
)
HANDWRITTEN = "# Backends\n\nOur words.\n\n" + "".join(
    f'## {key}\n\n--8<-- "gen:{key}"\n\nMore words.\n\n' for key in KEYS
)


def test_fill_replaces_every_marker():
    assert markers.fill('a --8<-- "gen:x" b\n', {"x": "X"}) == "a X b\n"


@pytest.mark.parametrize(
    ("page", "problem"),
    [
        ("nothing here\n", 'missing marker --8<-- "gen:x"'),
        ('--8<-- "gen:x" --8<-- "gen:y"\n', 'unsubstituted marker --8<-- "gen:y"'),
    ],
)
def test_fill_fails_as_vllms_docs_build_does(page, problem):
    with pytest.raises(markers.MarkerError, match=problem):
        markers.fill(page, {"x": "X"})


@pytest.fixture
def root(tmp_path):
    return build_tree(tmp_path / "tree", {MKDOCS: GENERATOR, PAGE: HANDWRITTEN})


def test_markers_filled_with_the_tables_only(root):
    page = fill_markers(HANDWRITTEN, analyze(root))
    assert "gen:" not in page
    assert page.startswith("# Backends\n\nOur words.\n\n## priority-standard\n\n**Blackwell")
    # a block is its tables, stripped: the page's own blank lines stay around it
    standard = page.split("## table-standard\n\n", 1)[1].split("\n\nMore words.", 1)[0]
    assert standard.startswith("| Backend | Version | Dtypes |")
    assert standard.splitlines()[1].startswith("| ------- | ------- | ------ |")
    assert "| `CPU_ATTN` | | " in standard
    mla = page.split("## priority-mla\n\n", 1)[1].split("\n\nMore words.", 1)[0]
    assert "| 1 | `TRITON_MLA`**\\*** |" in mla.splitlines()


def test_a_key_the_project_cannot_fill_is_named(root):
    generator = GENERATOR.replace('"table-mla-decode"', '"table-new-family"')
    other = build_tree(root.parent / "other", {MKDOCS: generator})
    page = HANDWRITTEN.replace("gen:table-mla-decode", "gen:table-new-family")
    with pytest.raises(markers.MarkerError, match='gen:table-new-family" \\(unknown block\\)'):
        fill_markers(page, analyze(other))


def test_check_leaves_a_marker_page_as_it_is(root, capsys):
    page = root / PAGE
    before = page.read_bytes()
    args = ["--root", str(root), "--check", "--profile", "vllm-page", "-o", str(page)]
    assert main([*args, "vllm/platforms/cuda.py"]) == 0
    assert page.read_bytes() == before
    assert "vLLM fills its gen: markers when it builds its docs" in capsys.readouterr().out


@pytest.mark.parametrize("key", KEYS)
def test_check_fails_naming_a_missing_marker(root, key, capsys):
    page = root / PAGE
    page.write_text(HANDWRITTEN.replace(f'--8<-- "gen:{key}"', "(gone)"), encoding="utf-8")
    before = page.read_bytes()
    assert main(["--root", str(root), "--check", "--profile", "vllm-page", "-o", str(page)]) == 1
    assert page.read_bytes() == before
    err = capsys.readouterr().err
    assert f'missing marker --8<-- "gen:{key}"' in err
    assert [k for k in KEYS if f'"gen:{k}"' in err] == [key]


def test_check_fails_on_a_marker_nothing_fills(root, capsys):
    page = root / PAGE
    page.write_text(HANDWRITTEN + '--8<-- "gen:table-unknown"\n', encoding="utf-8")
    assert main(["--root", str(root), "--check", "--profile", "vllm-page", "-o", str(page)]) == 1
    assert 'unsubstituted marker --8<-- "gen:table-unknown"' in capsys.readouterr().err


@pytest.mark.parametrize("profile", ["runtime", "vllm-page"])
def test_a_plain_write_never_replaces_a_marker_page(root, profile, capsys):
    page = root / PAGE
    before = page.read_bytes()
    assert main(["--root", str(root), "--profile", profile, "--no-cache"]) == 2
    assert page.read_bytes() == before
    assert 'holds vLLM\'s --8<-- "gen:..." markers' in capsys.readouterr().err


def test_fill_markers_writes_the_filled_page_elsewhere(root, tmp_path):
    out = tmp_path / "filled.md"
    args = ["--root", str(root), "--profile", "vllm-page", "--no-cache", "-o", str(out)]
    assert main([*args, "--fill-markers"]) == 0
    filled = out.read_text(encoding="utf-8")
    assert filled == fill_markers(HANDWRITTEN, analyze(root))
    # the same with the page named as the template; and --check of that output passes
    again = tmp_path / "again.md"
    template = ["--template", str(root / PAGE)]
    assert main([*args[:-1], str(again), *template]) == 0
    assert again.read_text(encoding="utf-8") == filled
    assert main([*args, *template, "--check"]) == 0


def test_fill_markers_needs_the_vllm_page_profile(root, tmp_path, capsys):
    out = tmp_path / "filled.md"
    assert main(["--root", str(root), "--fill-markers", "-o", str(out)]) == 2
    assert "--fill-markers needs --profile vllm-page" in capsys.readouterr().err
    assert not out.exists()


def test_a_template_missing_a_marker_is_an_error(root, tmp_path, capsys):
    template = tmp_path / "template.md"
    template.write_text(HANDWRITTEN.replace('--8<-- "gen:table-standard"', ""), "utf-8")
    out = tmp_path / "filled.md"
    args = ["--root", str(root), "--profile", "vllm-page", "--template", str(template)]
    assert main([*args, "-o", str(out)]) == 2
    assert 'missing marker --8<-- "gen:table-standard"' in capsys.readouterr().err
    assert not out.exists()
