"""The column registry: each column's facts are stated once and every view agrees."""

from __future__ import annotations

import dataclasses

import pytest
import vllm_trees

from sphinxext_attn.model import columns
from sphinxext_attn.model.columns import COLUMN, COLUMNS, FEATURE_COLUMNS, FLAGS
from sphinxext_attn.model.records import MLA_COLUMNS, STANDARD_COLUMNS, BackendFeatures
from sphinxext_attn.page.columns import generator_columns, read_generator
from sphinxext_attn.source.tree import SourceTree

FIELDS = {f.name: f for f in dataclasses.fields(BackendFeatures)}


def test_each_column_once_and_its_field_is_a_row_field() -> None:
    assert len(COLUMN) == len(COLUMNS)
    for column in COLUMNS:
        assert not column.field or column.field in FIELDS, column.title
        # extras live in ``extras``; the builder's CUDA-graph level in its own field
        assert column.on_page or not column.field or column.title in columns.RUNTIME_COLUMNS
    assert all(FIELDS[c.field].type == "bool" for c in FLAGS)


def test_the_page_layouts_name_registered_page_columns() -> None:
    assert set(FEATURE_COLUMNS) == {c.title for c in COLUMNS if c.on_page}
    assert set(STANDARD_COLUMNS) | set(MLA_COLUMNS) <= set(FEATURE_COLUMNS)


def test_views_follow_the_records() -> None:
    assert [c.title for c in FLAGS] == ["Sink", "Sparse", "MM Prefix", "Non-Causal", "DCP"]
    assert columns.OPTIONAL_COLUMNS == {"Non-Causal": "supports_non_causal", "DCP": "supports_dcp"}
    assert columns.EXTRA_COLUMNS["R-SWA"] == "supports_rswa"
    assert columns.RUNTIME_COLUMNS == ("CUDA Graphs",)
    assert "CUDA Graphs" not in columns.EXTRA_COLUMNS  # a builder's, not a backend flag
    assert {"KV Dtypes"} == columns.LITERAL_LIST_COLUMNS
    legend = [t for t, _ in columns.LEGEND]
    assert legend[: len(FEATURE_COLUMNS) - 2] == list(FEATURE_COLUMNS[2:])
    assert legend[len(FEATURE_COLUMNS) - 2 :] == list(columns.EXTRA_COLUMNS)


def test_cells_are_written_by_kind() -> None:
    row = BackendFeatures(
        "X", "a.X", supports_non_causal=True, block_sizes=(), head_sizes=("64",),
        extras={"supports_pcp": False},
    )  # fmt: skip
    assert row.cell("Non-Causal") == "✅"
    assert row.cell("Sink") == "❌"
    assert row.cell("Block Sizes") == "Any"
    assert row.cell("Head Sizes") == "64"
    assert row.cell("KV Dtypes") == "auto"
    assert row.cell("Backend") == "X"
    assert row.cell("PCP") == "❌"
    assert row.cell("R-SWA") == "?"  # not asked
    assert row.cell("CUDA Graphs") == "?"  # not asked
    graphs = dataclasses.replace(row, cudagraph={"level": "UNIFORM_BATCH"})
    assert graphs.cell("CUDA Graphs") == "UNIFORM_BATCH"
    unknown = dataclasses.replace(row, cudagraph={"unknown": "depends on the GPU: ..."})
    assert unknown.cell("CUDA Graphs") == "?"
    with pytest.raises(KeyError):
        row.cell("Nothing")


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".")[:2])


@pytest.mark.realtree
@pytest.mark.parametrize("version", ["0.16.0", "0.17.0", "0.20.0", "0.21.0", "0.33.0"])
def test_a_column_is_on_the_page_from_its_first_release(version: str) -> None:
    generator = read_generator(SourceTree(vllm_trees.tree(version)))
    assert generator is not None
    declared = generator_columns(generator)
    for column in COLUMNS:
        if column.since:
            assert (column.title in declared) == (_release(version) >= _release(column.since))
