"""The page layout and words read from a release's own generator (parsed, never
run), on invented generators shaped as vLLM's are; and the page they lead to."""

from __future__ import annotations

import ast
import functools

from treebuilder import build_tree, dedent

from sphinxext_attn.analysis.pipeline import analyze
from sphinxext_attn.page.generator import read_page_text
from sphinxext_attn.render.markdown import render_markdown

analyze = functools.partial(analyze, profile="vllm-page")

PRE_COMMIT = "tools/pre_commit/generate_attention_backend_docs.py"
MKDOCS = "docs/mkdocs/gen_files/generate_attention_backends.py"

#: A pre-commit era generator (0.18-0.26 shapes): spaced rules, single-spaced rows,
#: a priority footnote, a prefill note over two lines, table footnotes, prose.
SPACED = dedent(
    """
    def _render_table(columns, backends):
        sep = "| " + " | ".join("-" * len(name) for name, _ in columns) + " |"
        lines = []
        for info in backends:
            row = "| " + " | ".join(fmt(info) for _, fmt in columns) + " |"
            lines.append(row.replace("  ", " "))
        return lines

    def _priority_table(title, backends, annotations=None):
        return [f"**{title}:**", "", "| Priority | Backend |", "| -------- | ------- |", ""]

    def generate_priority_section(priorities):
        lines = ["## Backend Priority (CUDA)", "", "When no backend..."]
        mla_sm100_annotations = {"TRITON_MLA": "**\\\\***"}
        if "mla_sm100" in priorities:
            lines.append("> **\\\\*** Sparse MLA prefers its own list.")
            lines.append(">")
        return "\\n".join(lines)

    def generate_mla_section(prefill, decode):
        lines = [
            "## MLA (Multi-head Latent Attention) Backends",
            "",
            "MLA splits prefill and decode.",
            "",
            "### Prefill Backends",
            "",
            "Pick one with a flag,",
            "or let vLLM choose.",
            "",
            "| Backend | Description | Dtypes | Compute Cap. | Notes |",
        ]
        lines.extend(
            [
                "",
                "> **‡** First line of the note,",
                "> and its second line.",
                "",
                "### Decode Backends",
                "",
                "Decode backends are chosen with -ac.backend.",
                "",
            ]
        )
        return "\\n".join(lines)

    def generate_docs():
        footnotes = []
        if fi:
            footnotes.append("> **†** Our FlashInfer words.")
        if fa:
            footnotes.append("> **\\\\*** Our FlashAttention words.")
        return footnotes
    """
)


def page_text(source: str):
    return read_page_text(ast.parse(source))


def test_layout_and_words_of_a_pre_commit_generator():
    text = page_text(SPACED)
    assert text is not None
    assert text.spaced_rules and text.single_spaced
    assert text.paragraphs["### Prefill Backends"] == (
        "Pick one with a flag,",
        "or let vLLM choose.",
    )
    assert text.paragraphs["### Decode Backends"] == (
        "Decode backends are chosen with -ac.backend.",
    )
    assert text.paragraphs["## MLA (Multi-head Latent Attention) Backends"] == (
        "MLA splits prefill and decode.",
    )
    assert [(n.marker, n.lines) for n in text.priority_notes] == [
        ("*", ("Sparse MLA prefers its own list.",))
    ]
    assert [(n.marker, n.lines) for n in text.prefill_notes] == [
        ("‡", ("First line of the note,", "and its second line."))
    ]
    assert [(n.marker, n.text) for n in text.table_notes] == [
        ("†", "Our FlashInfer words."),
        ("*", "Our FlashAttention words."),
    ]
    assert text.annotations == {("mla", "sm100"): {"TRITON_MLA": "**\\***"}}
    assert text.marker_keys == ()


def test_the_seeds_layout_without_those_calls():
    text = page_text(
        dedent(
            """
            def _priority_table(title, backends):
                return ["| Priority | Backend |", "|----------|---------|"]
            """
        )
    )
    assert text is not None
    assert not text.spaced_rules and not text.single_spaced
    assert not text.paragraphs and not text.table_notes


def test_no_generator_no_page_text():
    assert read_page_text(None) is None


def test_marker_keys_of_a_mkdocs_generator():
    text = page_text(
        dedent(
            """
            def build_blocks():
                return {"priority-standard": _priority_block(p), "table-standard": _t(rows)}

            fill_markers("design/attention_backends.md", build_blocks())
            """
        )
    )
    assert text is not None and text.marker_keys == ("priority-standard", "table-standard")
    inline = page_text('fill_markers("design/attention_backends.md", {"table-mla-decode": t})')
    assert inline is not None and inline.marker_keys == ("table-mla-decode",)


def test_the_page_follows_the_generator(tmp_path):
    analysis = analyze(build_tree(tmp_path, {PRE_COMMIT: SPACED}))
    page = render_markdown(analysis)
    lines = page.splitlines()
    # spaced rules everywhere, an empty Version cell single-spaced
    assert "| -------- | ------- |" in lines and "|----------|---------|" not in lines
    assert "| ------ | ----------- |" in lines  # the legend
    cpu = next(ln for ln in lines if ln.startswith("| `CPU_ATTN`"))
    assert cpu.startswith("| `CPU_ATTN` | | ") and "  " not in cpu
    # the marker after a backend in the list its annotations name, then the note
    assert "| 1 | `TRITON_MLA`**\\*** |" in lines
    note = lines.index("> **\\*** Sparse MLA prefers its own list.")
    assert lines[note + 1] == ">" and lines[note + 2].startswith("> **Note:** ROCm")
    # the generator's footnotes under the standard table, in table order
    assert "> **†** Our FlashInfer words.\n>\n> **\\*** Our FlashAttention words.\n" in page
    # its prose under the MLA headings, and its prefill note
    assert "### Prefill Backends\n\nPick one with a flag,\nor let vLLM choose.\n\n| " in page
    assert "\n> **‡** First line of the note,\n> and its second line.\n" in page
    assert "### Decode Backends\n\nDecode backends are chosen with -ac.backend.\n\n| " in page


def test_without_a_generator_the_seeds_layout(tmp_path):
    page = render_markdown(analyze(build_tree(tmp_path)))
    assert "|----------|---------|" in page.splitlines()
    assert "| `CPU_ATTN` |  | " in page


def test_the_lists_annotated_only_where_the_generator_says(tmp_path):
    generator = dedent(
        """
        def _priority_block(priorities):
            standard_sm100_annotations = {"FLASH_ATTN": "†"}
            return ""
        """
    )
    page = render_markdown(analyze(build_tree(tmp_path, {MKDOCS: generator})))
    lines = page.splitlines()
    blackwell = lines.index("**Blackwell (SM 10.x):**")
    ampere = lines.index("**Ampere/Hopper (SM 8.x-9.x):**")
    assert "| 2 | `FLASH_ATTN`† |" in lines[blackwell:ampere]
    assert "| 1 | `FLASH_ATTN` |" in lines[ampere:]
