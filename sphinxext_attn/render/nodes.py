"""Records to docutils nodes, built directly so every builder gets real tables.

Nothing here parses markup: the few code spans and bold runs in the shared
prose are split by a small tokenizer into ``literal``/``strong`` nodes.
Functions raise :class:`RenderError` for option values that only make sense
once the data is known (a ``:widths:`` list of the wrong length); the
directive turns it into a directive error.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from docutils import nodes

from sphinxext_attn.model.columns import COLUMN, LITERAL_LIST_COLUMNS
from sphinxext_attn.model.records import (
    Analysis,
    BackendFeatures,
    Footnote,
    PrefillBackend,
)
from sphinxext_attn.render import prose
from sphinxext_attn.render.decorate import ASSUMED_MARK, NOTED_MARK, PLAIN, Decorations

#: Tables with more body rows than this become ``longtable`` in LaTeX.
LONGTABLE_ROWS = 10
#: Bounds of the automatic relative column widths.
MIN_WIDTH, MAX_WIDTH = 4, 30
#: Class put on every table we build (the CSS makes wide ones scroll).
TABLE_CLASS = "attn-table"
_MARKERS = "‡†*"


class RenderError(ValueError):
    """An option that does not fit the data (the directive reports it)."""


@dataclass
class TableSpec:
    """Presentation options shared by every table of one directive."""

    widths: str | list[int] | None = None  # "auto", "grid" or explicit
    classes: list[str] = field(default_factory=list)
    caption: str | None = None


Cell = str | list[nodes.Node]

_INLINE = re.compile(r"(`[^`]+`|\*\*[^*]+\*\*)")


def inline(text: str) -> list[nodes.Node]:
    """Text with markdown code spans and bold runs as literal/strong nodes."""
    out: list[nodes.Node] = []
    for part in _INLINE.split(text):
        if not part:
            continue
        if part.startswith("`"):
            out.append(nodes.literal(part[1:-1], part[1:-1]))
        elif part.startswith("**"):
            out.append(nodes.strong(part[2:-2], part[2:-2]))
        else:
            out.append(nodes.Text(part))
    return out


def literal_list(items: Iterable[str], separator: str = ", ") -> list[nodes.Node]:
    """``a``, ``b``: each item its own inline literal, as the seed quotes them."""
    out: list[nodes.Node] = []
    for i, item in enumerate(items):
        if i:
            out.append(nodes.Text(separator))
        out.append(nodes.literal(item, item))
    return out


def _cell_text(cell: Cell) -> str:
    return cell if isinstance(cell, str) else "".join(n.astext() for n in cell)


def auto_widths(header: Sequence[str], rows: Sequence[Sequence[Cell]]) -> list[int]:
    """Relative widths from the longest text of each column, clamped."""
    widths = []
    for i, head in enumerate(header):
        longest = max([len(head), *(len(_cell_text(r[i])) for r in rows)])
        widths.append(max(MIN_WIDTH, min(MAX_WIDTH, longest)))
    return widths


def _entry(cell: Cell) -> nodes.entry:
    para = nodes.paragraph()
    if isinstance(cell, str):
        if cell:
            para += nodes.Text(cell)
    else:
        para.extend(cell)
    return nodes.entry("", para)


def build_table(
    header: Sequence[str],
    rows: Sequence[Sequence[Cell]],
    spec: TableSpec,
    *,
    title: str | None = None,
    classes: Sequence[str] = (),
) -> nodes.table:
    """A complete docutils table: title, tgroup, colspecs, thead, tbody."""
    table = nodes.table(classes=[TABLE_CLASS, *classes, *spec.classes])
    caption = spec.caption if spec.caption is not None else title
    if caption:
        table += nodes.title(caption, "", *inline(caption))
    if isinstance(spec.widths, list):
        if len(spec.widths) != len(header):
            raise RenderError(
                f"{len(spec.widths)} widths given for {len(header)} columns ({', '.join(header)})"
            )
        widths = spec.widths
        table["classes"].append("colwidths-given")
    else:
        widths = auto_widths(header, rows)
        if spec.widths == "auto":
            table["classes"].append("colwidths-auto")
        elif spec.widths == "grid":
            table["classes"].append("colwidths-grid")
    if len(rows) > LONGTABLE_ROWS:
        table["classes"].append("longtable")
    tgroup = nodes.tgroup(cols=len(header))
    table += tgroup
    for width in widths:
        tgroup += nodes.colspec(colwidth=width)
    thead = nodes.thead()
    tgroup += thead
    thead += nodes.row("", *(_entry(h) for h in header))
    tbody = nodes.tbody()
    tgroup += tbody
    for r in rows:
        tbody += nodes.row("", *(_entry(c) for c in r))
    return table


def rubric(text: str) -> nodes.rubric:
    return nodes.rubric(text, "", *inline(text))


def paragraph(text: str) -> nodes.paragraph:
    """A paragraph; the seed's hard line breaks inside it become spaces."""
    return nodes.paragraph("", "", *inline(text.replace("\n", " ")))


# -- legend -------------------------------------------------------------------


def legend_nodes(
    spec: TableSpec,
    columns: Sequence[str] = prose.SEED_LEGEND_COLUMNS,
    *,
    evaluated: bool = False,
) -> list[nodes.Node]:
    """The legend table (column, description) and the symbols line; with
    ``evaluated``, the notation of evaluated cells too."""
    rows: list[list[Cell]] = [
        [[nodes.strong(c, c)], inline(d)] for c, d in prose.legend_rows(tuple(columns))
    ]
    table = build_table(["Column", "Description"], rows, spec, classes=("attn-legend",))
    symbols = nodes.paragraph("", "", nodes.strong("Symbols:", "Symbols:"))
    symbols += nodes.Text(" " + prose.SYMBOLS)
    out: list[nodes.Node] = [table, symbols]
    if evaluated:
        notation: list[list[Cell]] = [
            [[nodes.literal(n, n)], inline(d)] for n, d in prose.NOTATION
        ]
        plain = TableSpec(classes=list(spec.classes))
        out.append(
            build_table(
                ["Cell", "Means"],
                notation,
                plain,
                title="Notation of evaluated cells",
                classes=("attn-legend", "attn-notation"),
            )
        )
    return out


# -- feature tables -----------------------------------------------------------


def feature_cell(row: BackendFeatures, column: str, deco: Decorations = PLAIN) -> Cell:
    """One cell: backend names and KV dtype items as inline literals; decorated
    cells show where their value was read."""
    if column == "Backend":
        cell: list[nodes.Node] = [nodes.literal(row.name, row.name)]
    elif column in LITERAL_LIST_COLUMNS and column not in row.undeclared:
        cell = literal_list(getattr(row, COLUMN[column].field))
    else:
        text = row.cell(column)
        if deco is PLAIN or not text:
            return text
        cell = [nodes.Text(text)]
    reason = row.unknown.get(column)
    if reason is not None:
        return deco.unknown(reason, row.sources.get(column), cell)
    cell = deco.source(row.sources.get(column), cell)
    facts = row.assumptions.get(column)
    cell = deco.assumed(facts, cell) if facts else cell
    note = row.notes.get(column)
    return deco.noted(note, cell) if note else cell


def _feature_row(row: BackendFeatures, cols: Sequence[str], deco: Decorations) -> list[Cell]:
    """A row's cells; the first one carries the row's target when the decorations give one."""
    cells = [feature_cell(row, c, deco) for c in cols]
    target = deco.row_target(row)
    if target and cells:
        first = cells[0]
        cells[0] = [*target, *([nodes.Text(first)] if isinstance(first, str) else first)]
    return cells


def feature_nodes(
    analysis: Analysis,
    table: str,
    spec: TableSpec,
    *,
    columns: Sequence[str] | None = None,
    backends: frozenset[str] | None = None,
    deco: Decorations = PLAIN,
) -> list[nodes.Node]:
    """A feature table and, for the standard table, the footnotes its rows cite."""
    cols = list(columns or analysis.feature_columns(table))
    rows = [r for r in analysis.rows(table) if backends is None or r.name in backends]
    body = [_feature_row(r, cols, deco) for r in rows]
    out: list[nodes.Node] = [
        build_table(cols, body, spec, classes=("attn-features", f"attn-{table}"))
    ]
    if table == "standard" and "Version" in cols:
        cited = "".join(r.version for r in rows)
        notes = [f for f in analysis.footnotes if f.marker in cited]
        if notes:
            out.append(footnote_note(notes))
    if deco is not PLAIN:
        out += assumptions_note(rows, cols) + cell_notes(rows, cols)
    return out


def cell_notes(rows: Sequence[BackendFeatures], cols: Sequence[str]) -> list[nodes.Node]:
    """Under a table: the note of each marked cell, led by the backend and column."""
    notes = [(r.name, c, r.notes[c]) for r in rows for c in cols if c in r.notes]
    if not notes:
        return []
    para = nodes.paragraph("", "", classes=["attn-notes"])
    for i, (name, column, note) in enumerate(dict.fromkeys(notes)):
        para += nodes.Text("; " if i else f"{NOTED_MARK} ")
        para += nodes.literal(name, name)
        para += nodes.Text(f" {column}: {note}")
    para += nodes.Text(".")
    return [para]


def assumptions_note(rows: Sequence[BackendFeatures], cols: Sequence[str]) -> list[nodes.Node]:
    """Under a table: each fact about the machine its marked cells rest on, and where."""
    where: dict[str, list[str]] = {}
    for row in rows:
        for column in cols:
            for fact in row.assumptions.get(column, ()):
                place = f"{row.name} {column}"
                if place not in where.setdefault(fact, []):
                    where[fact].append(place)
    if not where:
        return []
    para = nodes.paragraph("", f"{ASSUMED_MARK} Assuming ", classes=["attn-assumptions"])
    for i, (fact, places) in enumerate(sorted(where.items())):
        para += nodes.Text("; " if i else "")
        para += nodes.literal(fact, fact)
        para += nodes.Text(f" ({', '.join(places)})")
    para += nodes.Text(
        ". Set them with attention_backends_env, attention_backends_options, "
        "attention_backends_assume or the directive's :env:, :option:, :assume:."
    )
    return [para]


def footnote_note(notes: Iterable[Footnote]) -> nodes.note:
    """Footnotes as a note next to the table, each led by its bold marker."""
    note = nodes.note(classes=["attn-footnotes"])
    for fn in notes:
        para = nodes.paragraph("", "", nodes.strong(fn.marker, fn.marker), nodes.Text(" "))
        para.extend(inline(fn.text.replace("\n", " ")))
        note += para
    return note


# -- MLA prefill --------------------------------------------------------------


def prefill_cell(row: PrefillBackend, column: str, deco: Decorations = PLAIN) -> Cell:
    """Registry-era rows name a code name (a literal) before their marker; the
    name cell shows where the row was read."""
    if column == "Backend" and row.literal:
        cell = [nodes.literal(row.name, row.name), *inline(row.marker)]
    else:
        cell = inline(row.cell(column))
    return deco.source(row.source, cell) if column == "Backend" and cell else cell


def prefill_nodes(
    analysis: Analysis,
    spec: TableSpec,
    *,
    columns: Sequence[str] | None = None,
    backends: frozenset[str] | None = None,
    deco: Decorations = PLAIN,
) -> list[nodes.Node]:
    """The MLA prefill table and, when a shown row carries ``‡``, its note."""
    cols = list(columns or analysis.prefill_columns())
    rows = [p for p in analysis.mla_prefill if backends is None or p.name in backends]
    body: list[list[Cell]] = [[prefill_cell(p, c, deco) for c in cols] for p in rows]
    out: list[nodes.Node] = [build_table(cols, body, spec, classes=("attn-prefill", "attn-mla"))]
    note = prose.prefill_footnote(analysis)
    if note and any(p.marker for p in rows):
        out.append(footnote_note([Footnote("‡", note)]))
    return out


def family_nodes(
    analysis: Analysis,
    table: str,
    spec: TableSpec,
    *,
    columns: Sequence[str] | None = None,
    backends: frozenset[str] | None = None,
    headings: bool = True,
    deco: Decorations = PLAIN,
) -> list[nodes.Node]:
    """A model family's own table (DeepSeek V4, MiniMax) under its title and intro."""
    if not analysis.rows(table):
        return []
    title, intro = prose.FAMILY_TABLES[table]
    head: list[nodes.Node] = [rubric(title), paragraph(intro)] if headings else []
    return head + feature_nodes(
        analysis, table, spec, columns=columns, backends=backends, deco=deco
    )


# -- the whole page -----------------------------------------------------------
