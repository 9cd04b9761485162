"""A platform's selection on a page: markdown for the command line, docutils for
the directives. ROCm: its lists per GPU group and the GPUs each backend accepts;
XPU, CPU: the ordered rules of ``get_attn_backend_cls``."""

from __future__ import annotations

from docutils import nodes

from sphinxext_attn.model.platform import PlatformSelection, gpu_header
from sphinxext_attn.model.records import Analysis
from sphinxext_attn.render import prose
from sphinxext_attn.render.markdown import _table, cell_notes, feature_cell

RULES_INTRO = (
    "{title} has no priority list: `get_attn_backend_cls` in `{source}` decides with "
    "an ordered `if`/`else`. With no backend requested, the first rule whose "
    "condition holds decides (conditions in the code's own words)."
)
LISTS_INTRO = (
    "{title} tries the backends of one list in order and picks the first that accepts "
    "the configuration, as on CUDA. The list depends on the GPU (read once, at import), "
    "the environment and the layer; each list below is titled by what leads to it "
    "(`{source}`, `get_valid_backends`)."
)
GPUS_INTRO = (
    "The backends {title}'s selection can reach, and the GPUs whose capability each accepts:"
)
FEATURES_INTRO = (
    "The backends {title}'s selection can reach, each cell what the class answers on "
    "{machine}. {capability}"
)
GPUS_WORDS = (
    "GPUs: the GPUs the release's {title} code names whose capability (derived from the "
    "arch name by its own code) the backend's `supports_compute_capability` accepts."
)
NO_CAPABILITY_WORDS = "Compute Cap. is N/A: {title}'s rules ask no compute capability."
#: The platform's feature tables, in the page's order.
PLATFORM_TABLES = (
    ("standard", "Standard Attention (MHA, MQA, GQA) Backends"),
    ("mla", "MLA Decode Backends"),
)


def intro_text(selection: PlatformSelection) -> str:
    """How the platform selects: by rules (XPU, CPU) or from lists (ROCm)."""
    template = RULES_INTRO if selection.rules else LISTS_INTRO
    return template.format(title=selection.title, source=selection.source)


def features_intro(selection: PlatformSelection) -> str:
    words = GPUS_WORDS if selection.gpus else NO_CAPABILITY_WORDS
    return FEATURES_INTRO.format(
        title=selection.title,
        machine=selection.machine,
        capability=words.format(title=selection.title),
    )


def _rule_rows(selection: PlatformSelection) -> list[list[str]]:
    return [
        [str(i), " and ".join(r.conditions) or "otherwise", r.shown]
        for i, r in enumerate(selection.rules, 1)
    ]


def markdown_section(analysis: Analysis) -> str:
    """``## Backend Selection (ROCm)`` and what follows it, then the platform's
    feature tables (when the analysis has its rows)."""
    selection: PlatformSelection = analysis.selection
    out = [_selection_markdown(selection)]
    if selection.error or not analysis.backends:
        return "\n".join(out)
    header = gpu_header(analysis)
    for table, heading in PLATFORM_TABLES:
        if not analysis.rows(table):
            continue
        columns = list(analysis.feature_columns(table))
        body = [[feature_cell(r, c) for c in columns] for r in analysis.rows(table)]
        names = [header if c == "Compute Cap." else c for c in columns]
        lines = [f"## {heading} ({selection.title})", "", features_intro(selection), ""]
        notes = cell_notes(analysis.rows(table), columns)
        out.append("\n".join([*lines, *_table(names, body), *notes, ""]))
    graphs = [r for r in analysis.backends if r.cudagraph_support]
    if graphs:  # a plugin's builders: what each declares for CUDA graphs
        lines = [f"## CUDA Graph Support ({selection.title})", "", CUDAGRAPH_INTRO, ""]
        rows = [[f"`{r.name}`", r.cudagraph_support] for r in graphs]
        out.append("\n".join([*lines, *_table(["Backend", "CUDA Graphs (builder)"], rows), ""]))
    return "\n".join(out)


CUDAGRAPH_INTRO = (
    "What each backend's metadata builder declares (`_cudagraph_support`); "
    '"not declared": vLLM then assumes its base builder\'s answer.'
)


def _selection_markdown(selection: PlatformSelection) -> str:
    title, source = selection.title, selection.source
    lines = [f"## Backend Selection ({title})", ""]
    if selection.error:
        return "\n".join([*lines, f"Not evaluated: {selection.error}", ""])
    if selection.rules:
        lines += [RULES_INTRO.format(title=title, source=source), ""]
        lines += ["| Rule | When | Outcome |", "| --- | --- | --- |"]
        lines += [
            f"| {n} | `{when}` | `{what}` |"
            if not what.startswith("raises")
            else f"| {n} | `{when}` | {what} |"
            for n, when, what in _rule_rows(selection)
        ]
        return "\n".join([*lines, ""])
    lines += [LISTS_INTRO.format(title=title, source=source), ""]
    for category in ("standard", "mla"):
        mine = [p for p in selection.lists if p.category == category]
        if not mine:
            continue
        lines += [f"### {prose.CATEGORY_TITLES[category]}", ""]
        for plist in mine:
            lines += [f"**{plist.title}:**", "", "| Priority | Backend |", "| --- | --- |"]
            lines += [f"| {i} | `{b}` |" for i, b in enumerate(plist.backends, 1)]
            lines.append("")
    if selection.gpus:
        lines += [GPUS_INTRO.format(title=title), "", "| Backend | GPUs |", "| --- | --- |"]
        lines += [f"| `{b}` | {', '.join(g) or 'none'} |" for b, g in selection.gpus.items()]
        lines.append("")
    return "\n".join(lines)


def rules_nodes(selection: PlatformSelection, table_classes: tuple[str, ...] = ()) -> nodes.table:
    """The rules as a table: rule number, condition, outcome."""
    table = nodes.table(classes=["attn-rules", "colwidths-given", *table_classes])
    group = nodes.tgroup(cols=3)
    table += group
    for width in (6, 50, 30):
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    group += head
    head += _row(["Rule", "When", "Outcome"], literal=False)
    body = nodes.tbody()
    group += body
    for number, when, what in _rule_rows(selection):
        row = nodes.row()
        for i, text in enumerate((number, when, what)):
            entry = nodes.entry()
            literal = i == 1 or (i == 2 and not text.startswith("raises"))
            entry += nodes.paragraph(
                "", "", nodes.literal(text, text) if literal else nodes.Text(text)
            )
            row += entry
        body += row
    return table


def gpus_nodes(selection: PlatformSelection) -> nodes.table:
    table = nodes.table(classes=["attn-gpus", "colwidths-given"])
    group = nodes.tgroup(cols=2)
    table += group
    for width in (24, 40):
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    group += head
    head += _row(["Backend", "GPUs"], literal=False)
    body = nodes.tbody()
    group += body
    for backend, gpus in selection.gpus.items():
        row = nodes.row()
        for i, text in enumerate((backend, ", ".join(gpus) or "none")):
            entry = nodes.entry()
            entry += nodes.paragraph(
                "", "", nodes.literal(text, text) if i == 0 else nodes.Text(text)
            )
            row += entry
        body += row
    return table


def _row(cells: list[str], literal: bool) -> nodes.row:
    row = nodes.row()
    for text in cells:
        entry = nodes.entry()
        entry += nodes.paragraph(
            "", "", nodes.literal(text, text) if literal else nodes.Text(text)
        )
        row += entry
    return row
