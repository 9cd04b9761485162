"""The interactive selector's markup (HTML) and its static stand-in (every other builder).

The HTML is a form of labelled controls, a live region the decision is
written into by ``attention_backends_selector.js``, and the factored table as
inline JSON. Other builders get real docutils tables: the priority lists of
each architecture with the values that lead to them, and what each backend
rejects.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Sequence
from typing import Any

from docutils import nodes

from sphinxext_attn.model.selector_shape import (
    LAYER_GRID,
    RULES,
    BackendEntry,
    SelectorData,
    Shipped,
)
from sphinxext_attn.render.nodes import TableSpec, build_table, literal_list

#: control labels; flags are checkboxes, the rest drop-down lists
LABELS = {
    "platform": "Platform",
    "arch": "GPU (ROCm arch)",
    "capability": "Architecture (compute capability)",
    "dtype": "Model dtype",
    "kv_cache_dtype": "KV cache dtype",
    "head_size": "Head size",
    "block_size": "Block size",
    "num_heads": "Number of attention heads",
    "attn_type": "Attention type",
    "use_mla": "MLA (multi-head latent attention)",
    "use_sparse": "Sparse attention",
    "has_sink": "Attention sinks",
    "use_mm_prefix": "Multimodal prefix (bidirectional)",
    "use_non_causal": "Non-causal attention",
    "use_kv_connector": "KV connector (the KV cache is transferred)",
    "model_attn_type": "Model attention type (ModelConfig.attn_type)",
    "backend": "Backend asked for (--attention-backend)",
}
#: the backend control's first value: no backend asked for
AUTOMATIC = "automatic (vLLM chooses)"
#: how an empty value (None) reads in a list
NONE_TEXT = {
    "block_size": "default (any)",
    "num_heads": "unknown",
    "model_attn_type": "none (no engine config)",
}
FLAG_DIMS = (
    "use_mla",
    "use_sparse",
    "has_sink",
    "use_mm_prefix",
    "use_non_causal",
    "use_kv_connector",
)
#: free input (any value can be typed; the offered ones are suggestions): the code
#: tells apart more head sizes and capabilities than a grid can list
FREE_DIMS = ("capability", "head_size")
RAISES = "vLLM raises: no valid backend"
PLATFORM_WORDS = {"cuda": "CUDA", "rocm": "ROCm", "xpu": "XPU", "cpu": "CPU"}
#: what the environment controls start from (the script adds the current values)
ASSUMES = (
    "The environment controls start from the environment the docs were built with: "
    "each variable as set there (unset: vLLM's default), each fact about the machine "
    "as assumed there. A fact nobody set that the code cannot settle (is aiter "
    "installed?) is decided both ways, and the decision is conditional when they differ. "
    "A control is offered for each variable or fact that changes a decision on this page."
)


def _platform_words(platforms: Iterable[str]) -> dict[str, str]:
    """vLLM's platforms by their names, another (a plugin's ``npu``) in capitals."""
    return {p: PLATFORM_WORDS.get(p, p.upper()) for p in platforms}


def option_text(dim: str, value: str) -> str:
    if value == "":
        return NONE_TEXT.get(dim, "none")
    if dim == "capability":
        major, _, minor = value.partition(".")
        return f"{value} (sm{major}{minor})"
    return value


def selector_html(
    ident: str,
    table: Shipped,
    allowed: dict[str, Sequence[str]],
    defaults: dict[str, str],
    caption: str | None = None,
    classes: Sequence[str] = (),
    problems: Sequence[str] = (),
) -> str:
    """The form, the decision region and the data, as one HTML fragment."""
    esc = html.escape
    out = [
        f'<div class="attn-selector {" ".join(esc(c) for c in classes)}" id="{esc(ident)}">',
    ]
    if caption:
        out.append(f'<p class="attn-selector-caption"><strong>{esc(caption)}</strong></p>')
    out.append('<form class="attn-selector-form" action="#" onsubmit="return false;">')
    out.append('<fieldset class="attn-selector-choices"><legend>Configuration</legend>')
    out.extend(platform_controls(ident, table))
    out.extend(backend_control(ident, table))
    for dim, values in allowed.items():
        cid = f"{ident}-{dim}"
        # a setting only some tables have: the script shows it with those
        layer = " data-layer" if dim in LAYER_GRID else ""
        if dim in FLAG_DIMS:
            fixed = len(values) == 1
            checked = " checked" if defaults[dim] == "true" else ""
            disabled = " disabled" if fixed else ""
            out.append(
                f'<div class="attn-selector-flag"><input type="checkbox" id="{cid}" '
                f'name="{dim}"{checked}{disabled}{layer}> <label for="{cid}">{esc(LABELS[dim])}'
                f"</label></div>"
            )
            continue
        if dim in FREE_DIMS:
            suggestions = "".join(
                f'<option value="{esc(v)}">{esc(option_text(dim, v))}</option>' for v in values
            )
            out.append(
                f'<div class="attn-selector-field"><label for="{cid}">{esc(LABELS[dim])}</label> '
                f'<input type="text" id="{cid}" name="{dim}" value="{esc(defaults[dim])}" '
                f'list="{cid}-values" inputmode="decimal" autocomplete="off" '
                f'spellcheck="false" size="8">'
                f'<datalist id="{cid}-values">{suggestions}</datalist></div>'
            )
            continue
        opts = "".join(
            f'<option value="{esc(v)}"{" selected" if v == defaults[dim] else ""}>'
            f"{esc(option_text(dim, v))}</option>"
            for v in values
        )
        out.append(
            f'<div class="attn-selector-field"><label for="{cid}">{esc(LABELS[dim])}</label> '
            f'<select id="{cid}" name="{dim}"{layer}>{opts}</select></div>'
        )
    out.append("</fieldset>")
    out.append(
        '<fieldset class="attn-selector-env"><legend>Environment</legend>'
        '<div class="attn-selector-facts"></div>'
        f'<p class="attn-selector-assumes">{esc(ASSUMES)}</p>'
        + "".join(f'<p class="attn-selector-problem">{esc(p)}</p>' for p in problems)
        + "</fieldset></form>"
    )
    out.append(
        '<div class="attn-selector-decision" aria-live="polite" role="status">'
        "<noscript><p>The selector needs JavaScript; the command line gives the same "
        "decision: <code>python -m sphinxext_attn select</code>.</p></noscript></div>"
    )
    data = json.dumps(table, separators=(",", ":"), ensure_ascii=False)
    data = data.replace("</", "<\\/").replace("<!--", "<\\!--")
    out.append(f'<script type="application/json" class="attn-selector-data">{data}</script>')
    out.append("</div>")
    return "\n".join(out)


def platform_controls(ident: str, table: Shipped) -> list[str]:
    """The platform (and ROCm GPU) lists, on a page that offers more than one table."""
    if "variants" not in table:
        return []
    esc = html.escape
    first = table["variants"][table["default"]]
    platforms: dict[str, list[str]] = {}
    for variant in table["variants"].values():
        archs = platforms.setdefault(variant["platform"], [])
        if variant["arch"]:
            archs.append(variant["arch"])
    out = []
    for name, values, chosen, words in (
        ("platform", list(platforms), first["platform"], _platform_words(platforms)),
        ("arch", platforms.get("rocm", []), first["arch"], {}),
    ):
        if not values:
            continue
        opts = "".join(
            f'<option value="{esc(v)}"{" selected" if v == chosen else ""}>'
            f"{esc(words.get(v, v))}</option>"
            for v in values
        )
        out.append(
            f'<div class="attn-selector-field attn-selector-{name}">'
            f'<label for="{ident}-{name}">{esc(LABELS[name])}</label> '
            f'<select id="{ident}-{name}" name="{name}">{opts}</select></div>'
        )
    return out


def request_names(table: Shipped) -> list[str]:
    """The backend names a request may give, as the page's tables hold them (the
    release's registry: the same on every platform; none without the control)."""
    first = table["variants"][table["default"]] if "variants" in table else table
    caps = list(first["caps"].values())
    return list(caps[0].get("requests", {})) if caps else []


def backend_control(ident: str, table: Shipped) -> list[str]:
    """The list of backends one may ask for (``select --backend``), automatic first."""
    names = request_names(table)
    if not names:
        return []
    esc = html.escape
    opts = f'<option value="" selected>{esc(AUTOMATIC)}</option>' + "".join(
        f'<option value="{esc(n)}">{esc(n)}</option>' for n in names
    )
    return [
        f'<div class="attn-selector-field attn-selector-backend">'
        f'<label for="{ident}-backend">{esc(LABELS["backend"])}</label> '
        f'<select id="{ident}-backend" name="backend">{opts}</select></div>'
    ]


#: the values of a rule platform's check (:mod:`.selector_checks`), as the table indexes them
CHECK_VALUES = ["accepts", "refuses"]


def _grid(table: SelectorData) -> dict[str, list[str]]:
    """The table's settings and their values, a rule platform's checks after them."""
    grid = {dim: values for dim, values in table["dims"]}
    grid.update({name: CHECK_VALUES for name in table.get("checks", [])})
    return grid


def _dim(table: SelectorData, d: int) -> str:
    names: list[str] = [dim for dim, _ in table["dims"] if dim != "capability"]
    names += table.get("checks", [])
    return names[d]


def _conditions(
    table: SelectorData, grid: dict[str, list[str]], keys: list[int], points: list[list[int]]
) -> str:
    """The values of each setting that lead to one list (a setting whose every value
    does is left out). Per setting: where two settings decide together (MLA on
    SM100: KV cache dtype and head count), each shows the values it takes somewhere."""
    parts = []
    for j, d in enumerate(keys):
        dim = _dim(table, d)
        seen = sorted({p[j] for p in points})
        if len(seen) == len(grid[dim]):
            continue
        parts.append(f"{dim} = " + ", ".join(option_text(dim, grid[dim][i]) for i in seen))
    return "; ".join(parts) or "always"


def fallback_nodes(
    table: SelectorData, capabilities: Sequence[str], spec: TableSpec
) -> list[nodes.Node]:
    """Static tables for builders that run no script."""
    grid = _grid(table)
    prio_rows: list[list[Any]] = []
    for cap in capabilities:
        prio = table["caps"][cap]["priorities"]
        keys = prio["keys"]
        sizes = [len(grid[_dim(table, d)]) for d in keys]
        by_list: dict[int, list[list[int]]] = {}
        for index, list_id in enumerate(prio["table"]):
            point: list[int] = []
            rest = index
            for size in reversed(sizes):
                point.insert(0, rest % size)
                rest //= size
            by_list.setdefault(list_id, []).append(point)
        for list_id, points in by_list.items():
            names = table["lists"][list_id]
            if table.get("kind") == RULES:  # an outcome: the backend, or what stops it
                kind, text = names
                names = [text if kind == "selected" else f"({kind}: {text})"]
            prio_rows.append(
                [
                    option_text("capability", cap),
                    _conditions(table, grid, keys, points),
                    _names(names),
                ]
            )
    reject_rows = []
    for cap in capabilities:
        for name, entry in sorted(table["caps"][cap]["backends"].items()):
            reject_rows.append([name, option_text("capability", cap), _rejects(table, entry)])
    return [
        build_table(
            ["Architecture", "Settings that lead to it", "Priority list"],
            prio_rows,
            TableSpec(widths=spec.widths, classes=spec.classes, caption=spec.caption),
            title="Priority lists of the selector",
            classes=["attn-selector-static"],
        ),
        build_table(
            ["Backend", "Architecture", "Rejects"],
            reject_rows,
            TableSpec(classes=spec.classes),
            title="What each backend rejects, one setting at a time",
            classes=["attn-selector-static"],
        ),
    ]


def _names(names: Sequence[str]) -> list[nodes.Node]:
    return literal_list(names, " > ")


def _rejects(table: SelectorData, entry: BackendEntry) -> str:
    """Reason -> the settings that give it, from the backend's baseline."""
    grid = {dim: values for dim, values in table["dims"]}
    reasons = table["reasons"]
    if entry["reasons"]:
        always = "; ".join(reasons[r] for r in entry["reasons"])
        return f"every configuration on this architecture ({always})"
    by_reason: dict[int, list[str]] = {}
    for key, row in entry["single"].items():
        dim = _dim(table, int(key))
        for i, found in enumerate(row):
            for r in found:
                by_reason.setdefault(r, []).append(f"{dim} {option_text(dim, grid[dim][i])}")
    if not by_reason:
        return "nothing in the grid"
    return "; ".join(f"{reasons[r]} ({', '.join(where)})" for r, where in by_reason.items())


__all__ = ["LABELS", "RAISES", "fallback_nodes", "option_text", "selector_html"]
