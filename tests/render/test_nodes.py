"""Records to docutils nodes, checked on hand-built analyses (no Sphinx app)."""

from __future__ import annotations

import pytest
from docutils import nodes

from sphinxext_attn.model.records import (
    MLA_COLUMNS,
    STANDARD_COLUMNS,
    Analysis,
    BackendFeatures,
    Footnote,
    PrefillBackend,
    PriorityList,
)
from sphinxext_attn.render import nodes as render
from sphinxext_attn.render import priority
from sphinxext_attn.render.full_page import page_nodes


def _analysis(versions: bool = True, many: int = 0) -> Analysis:
    rows = [
        BackendFeatures("TRITON_ATTN", "x.T", kv_cache_dtypes=("auto", "fp8")),
        BackendFeatures("MLA_ONE", "x.M", is_mla=True, is_sparse=True, head_sizes=("576",)),
    ]
    if versions:
        rows += [
            BackendFeatures("FLASH_ATTN", "x.F", version="FA3*", variant_order=1),
            BackendFeatures("FLASH_ATTN", "x.F", version="FA2*", compute_capability="≥8.0"),
        ]
    rows += [BackendFeatures(f"B{i:02d}", "x.B") for i in range(many)]
    return Analysis(
        root="/nowhere",
        backends=rows,
        priorities=[
            PriorityList("standard", "sm100", ("TRITON_ATTN", "FLASH_ATTN")),
            PriorityList("mla", "default", ("MLA_ONE",)),
        ],
        mla_prefill=[
            PrefillBackend("Ragged", "ragged", "10.x", disable="`-ac.x=0`", marker="‡"),
            PrefillBackend("Plain", "plain", "Any"),
        ],
        footnotes=[Footnote("†", "not cited"), Footnote("*", "Pick with `--fa=2`.")],
    )


def _texts(table: nodes.table) -> tuple[list[str], list[list[str]]]:
    tgroup = table.next_node(nodes.tgroup)
    head = [e.astext() for e in tgroup.next_node(nodes.thead).findall(nodes.entry)]
    body = [[e.astext() for e in row.children] for row in tgroup.next_node(nodes.tbody).children]
    return head, body


def test_table_is_built_from_real_nodes():
    table = render.feature_nodes(_analysis(), "standard", render.TableSpec())[0]
    assert isinstance(table, nodes.table)
    tgroup = table.children[0]
    assert isinstance(tgroup, nodes.tgroup) and tgroup["cols"] == len(STANDARD_COLUMNS)
    colspecs = [c for c in tgroup.children if isinstance(c, nodes.colspec)]
    assert len(colspecs) == len(STANDARD_COLUMNS)
    assert all(isinstance(c["colwidth"], int) and c["colwidth"] > 0 for c in colspecs)
    assert isinstance(tgroup.children[-2], nodes.thead)
    assert isinstance(tgroup.children[-1], nodes.tbody)
    head, body = _texts(table)
    assert head == list(STANDARD_COLUMNS)
    assert [r[:2] for r in body] == [
        ["FLASH_ATTN", "FA2*"],
        ["FLASH_ATTN", "FA3*"],
        ["TRITON_ATTN", ""],
    ]
    assert body[1][head.index("Compute Cap.")] == "Any"
    assert body[0][head.index("Compute Cap.")] == "≥8.0"


def test_names_and_kv_dtypes_are_inline_literals():
    table = render.feature_nodes(_analysis(), "standard", render.TableSpec())[0]
    last = table.next_node(nodes.tbody).children[-1]
    name_cell, kv_cell = last.children[0], last.children[3]
    assert [n.astext() for n in name_cell.findall(nodes.literal)] == ["TRITON_ATTN"]
    assert [n.astext() for n in kv_cell.findall(nodes.literal)] == ["auto", "fp8"]
    assert kv_cell.astext() == "auto, fp8"


def test_footnotes_only_the_cited_ones_in_a_note():
    out = render.feature_nodes(_analysis(), "standard", render.TableSpec())
    assert len(out) == 2 and isinstance(out[1], nodes.note)
    (para,) = out[1].children
    assert para.astext() == "* Pick with --fa=2."
    assert para.next_node(nodes.literal).astext() == "--fa=2"


def test_version_column_dropped_without_variants():
    out = render.feature_nodes(_analysis(versions=False), "standard", render.TableSpec())
    head, _ = _texts(out[0])
    assert "Version" not in head
    assert len(out) == 1  # nothing to cite, no note


def test_mla_table_and_columns_and_backends():
    table = render.feature_nodes(_analysis(), "mla", render.TableSpec())[0]
    head, body = _texts(table)
    assert head == list(MLA_COLUMNS)
    assert body == [
        ["MLA_ONE", "fp16, bf16", "auto", "Any", "576", "❌", "✅", "❌", "Decoder", "Any"]
    ]
    table = render.feature_nodes(
        _analysis(),
        "standard",
        render.TableSpec(),
        columns=("DCP", "Backend"),
        backends=frozenset({"FLASH_ATTN"}),
    )[0]
    assert _texts(table) == (["DCP", "Backend"], [["❌", "FLASH_ATTN"], ["❌", "FLASH_ATTN"]])


def test_caption_widths_classes_and_longtable():
    spec = render.TableSpec(widths=[1, 2], classes=["mine"], caption="My `code`")
    table = priority.priority_nodes(
        _analysis(),
        spec,
        categories=("standard",),
        arches=("sm100",),
        headings=False,
        layout="lists",
    )[0]
    title = table.children[0]
    assert isinstance(title, nodes.title) and title.astext() == "My code"
    assert [c["colwidth"] for c in table.findall(nodes.colspec)] == [1, 2]
    assert {"attn-table", "mine", "colwidths-given"} <= set(table["classes"])
    assert "longtable" not in table["classes"]
    big = render.feature_nodes(_analysis(many=20), "standard", render.TableSpec(widths="auto"))
    assert {"longtable", "colwidths-auto"} <= set(big[0]["classes"])
    with pytest.raises(render.RenderError, match="3 widths given for 2 columns"):
        render.legend_nodes(render.TableSpec(widths=[1, 2, 3]))


def test_priority_lists_keep_their_rank_when_filtered():
    out = priority.priority_nodes(
        _analysis(),
        render.TableSpec(),
        categories=("standard", "mla"),
        arches=("sm100", "default"),
        backends=frozenset({"FLASH_ATTN", "MLA_ONE"}),
        layout="lists",
    )
    kinds = [type(n).__name__ for n in out]
    assert kinds == ["rubric", "table", "rubric", "table"]
    assert out[1].children[0].astext() == "Blackwell (SM 10.x)"
    assert _texts(out[1])[1] == [["2", "FLASH_ATTN"]]
    assert "attn-default" in out[3]["classes"]


def test_prefill_cells_and_its_note():
    out = render.prefill_nodes(_analysis(), render.TableSpec())
    head, body = _texts(out[0])
    assert head == ["Backend", "Description", "Compute Cap.", "Enable", "Disable", "Notes"]
    assert body[0] == ["Ragged‡", "ragged", "10.x", "", "-ac.x=0", ""]
    assert out[0].next_node(nodes.literal).astext() == "-ac.x=0"
    assert isinstance(out[1], nodes.note) and out[1].astext().startswith("‡ TRT-LLM Ragged")
    only_plain = render.prefill_nodes(
        _analysis(), render.TableSpec(), backends=frozenset({"Plain"})
    )
    assert len(only_plain) == 1


def test_legend_and_page_order():
    legend = render.legend_nodes(render.TableSpec(), ("Sink", "DCP"))
    assert _texts(legend[0])[1] == [
        ["Sink", "Attention sink support (for StreamingLLM)"],
        ["DCP", "Decode Context Parallelism support (--decode-context-parallel-size)"],
    ]
    assert legend[1].astext().startswith("Symbols: ✅ = Supported")
    page = page_nodes(_analysis(), render.TableSpec(widths=[1] * 10))
    rubrics = [n.astext() for n in page if isinstance(n, nodes.rubric)]
    assert rubrics == [
        "Backend Priority (CUDA)",
        "Standard Attention (MHA, MQA, GQA)",
        "MLA Attention (DeepSeek-style)",
        "Legend",
        "Standard Attention (MHA, MQA, GQA) Backends",
        "MLA (Multi-head Latent Attention) Backends",
        "Prefill Backends",
        "Decode Backends",
    ]
    # explicit widths reached the two feature tables only
    given = [t for t in page if isinstance(t, nodes.table) and "colwidths-given" in t["classes"]]
    assert [t["classes"][2] for t in given] == ["attn-standard", "attn-mla"]


def test_priority_matrix_puts_lists_side_by_side():
    """A row per backend in first-named order, a column per list, ranks in the cells,
    and a dash where a list does not hold the backend."""
    out = priority.priority_nodes(
        _analysis(),
        render.TableSpec(),
        categories=("standard",),
        arches=("sm100", "default"),
        layout="matrix",
        headings=False,
    )
    assert [type(n).__name__ for n in out] == ["table"]
    table = out[0]
    assert "attn-matrix" in table["classes"]
    assert table.children[0].astext().startswith("Standard Attention")
    head, body = _texts(table)
    lists = _analysis().priority_lists("standard", ("sm100", "default"))
    assert head == ["Backend", *(p.title for p in lists)]
    names = list(dict.fromkeys(n for p in lists for n in p.backends))
    assert [r[0] for r in body] == names
    for row in body:
        for plist, cell in zip(lists, row[1:], strict=True):
            want = plist.backends.index(row[0]) + 1 if row[0] in plist.backends else None
            assert cell == (str(want) if want else priority.ABSENT)


def test_matrix_headers_give_long_conditions_to_notes():
    short = PriorityList("standard", "sm90", ("A",), conditions="x", arch_title="Hopper")
    long = PriorityList(
        "standard", "sm100", ("A",), conditions="causal, without a prefix", arch_title="Blackwell"
    )
    assert priority.column_headers([short, long]) == (
        ["Hopper: x", "Blackwell (1)"],
        ["causal, without a prefix"],
    )
