"""The priority lists as docutils tables: one table per list, or one matrix per category.

``lists`` is the shape of vLLM's page: a two-column table (Priority, Backend)
for each list, titled with the conditions that lead to it. It is the default:
its cells are those of vLLM's page and of the command line's markdown, each
table reads on its own (no note to look up), and before vLLM 0.25 a category
has only two lists. From 0.25 on a category has up to six (0.33.0: ten tables
in all) that differ by a swap or a prefix; ``matrix`` puts a category's lists
side by side: a row per backend, a column per list, the rank in each cell, so
one row shows where a backend stands on every architecture. A column is
headed by its architecture; the conditions that lead to the list go into the
header when short, else into a numbered note under the table.
"""

from __future__ import annotations

from collections.abc import Sequence

from docutils import nodes

from sphinxext_attn.model.records import CATEGORIES, Analysis, PriorityList
from sphinxext_attn.render import prose
from sphinxext_attn.render.decorate import PLAIN, Decorations
from sphinxext_attn.render.nodes import Cell, TableSpec, build_table, inline, rubric

PRIORITY_COLUMNS: tuple[str, ...] = ("Priority", "Backend")
LAYOUTS = ("matrix", "lists")
DEFAULT_LAYOUT = "lists"
#: a column header longer than this gives its conditions to a numbered note
HEADER_CHARS = 24
#: a matrix cell of a backend the list does not hold
ABSENT = "—"
MATRIX_CLASS = "attn-matrix"
MATRIX_TITLE = "rank in each list (1 = tried first)"


def priority_nodes(
    analysis: Analysis,
    spec: TableSpec,
    *,
    categories: Sequence[str],
    arches: Sequence[str] | None = None,
    backends: frozenset[str] | None = None,
    columns: Sequence[str] = PRIORITY_COLUMNS,
    headings: bool = True,
    deco: Decorations = PLAIN,
    layout: str = DEFAULT_LAYOUT,
) -> list[nodes.Node]:
    """The lists of ``categories`` under a rubric per category. ``arches`` None:
    every evaluated list, or the seed's two when the lists were read literally."""
    out: list[nodes.Node] = []
    for category in CATEGORIES:
        if category not in categories:
            continue
        lists = analysis.priority_lists(category, arches)
        if not lists:
            continue
        if headings:
            out.append(rubric(prose.CATEGORY_TITLES[category]))
        if layout == "matrix":
            title = (
                MATRIX_TITLE if headings else f"{prose.CATEGORY_TITLES[category]}: {MATRIX_TITLE}"
            )
            out += matrix_nodes(lists, category, spec, backends=backends, deco=deco, title=title)
            continue
        for plist in lists:
            out.append(_list_table(plist, category, spec, backends, columns, deco))
    return out


def _rank(plist: PriorityList, rank: int, deco: Decorations) -> Cell:
    """The rank carries the list's source (the name may be a link already)."""
    if deco is PLAIN:
        return str(rank)
    return deco.source(plist.source, [nodes.Text(str(rank))])


def _list_table(
    plist: PriorityList,
    category: str,
    spec: TableSpec,
    backends: frozenset[str] | None,
    columns: Sequence[str],
    deco: Decorations,
) -> nodes.table:
    rows: list[list[Cell]] = []
    for rank, name in enumerate(plist.backends, 1):
        if backends is not None and name not in backends:
            continue
        cells: dict[str, Cell] = {
            "Priority": _rank(plist, rank, deco),
            "Backend": deco.backend_ref(name),
        }
        rows.append([cells[c] for c in columns])
    return build_table(
        list(columns),
        rows,
        spec,
        title=plist.title,
        classes=("attn-priority", f"attn-{category}", f"attn-{plist.arch}"),
    )


def column_headers(lists: Sequence[PriorityList]) -> tuple[list[str], list[str]]:
    """Each list's column header, and the numbered notes of the long ones."""
    headers: list[str] = []
    notes: list[str] = []
    for plist in lists:
        title = plist.title
        if len(title) <= HEADER_CHARS or not plist.arch_title or not plist.conditions:
            headers.append(title)
            continue
        notes.append(plist.conditions)
        headers.append(f"{plist.arch_title} ({len(notes)})")
    return headers, notes


def matrix_nodes(
    lists: Sequence[PriorityList],
    category: str,
    spec: TableSpec,
    *,
    backends: frozenset[str] | None = None,
    deco: Decorations = PLAIN,
    title: str | None = None,
) -> list[nodes.Node]:
    """One table: a row per backend (in the order the lists first name them), a
    column per list, the rank in each cell; then the notes of long headers."""
    names = [n for n in dict.fromkeys(n for p in lists for n in p.backends)]
    if backends is not None:
        names = [n for n in names if n in backends]
    headers, notes = column_headers(lists)
    rows: list[list[Cell]] = []
    for name in names:
        row: list[Cell] = [deco.backend_ref(name)]
        for plist in lists:
            ranks = [i for i, n in enumerate(plist.backends, 1) if n == name]
            row.append(_rank(plist, ranks[0], deco) if ranks else ABSENT)
        rows.append(row)
    table = build_table(
        ["Backend", *headers],
        rows,
        spec,
        title=title[:1].upper() + title[1:] if title else None,
        classes=("attn-priority", MATRIX_CLASS, f"attn-{category}"),
    )
    out: list[nodes.Node] = [table]
    if notes:
        box = nodes.container("", classes=["attn-matrix-notes"])
        for i, text in enumerate(notes, 1):
            box += nodes.paragraph("", "", nodes.Text(f"({i}) "), *inline(text))
        out.append(box)
    return out
