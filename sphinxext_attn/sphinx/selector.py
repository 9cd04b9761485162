"""``attention-backends-selector``: pick a configuration, see which backend vLLM takes.

The decision is computed at build time by the same code as ``sphinxext-attn
select`` (:class:`~sphinxext_attn.selection.decision.Selector`), over a grid,
factored (:mod:`sphinxext_attn.selector.table`) and shipped as inline
JSON; ``attention_backends_selector.js`` looks it up as the reader changes
the controls. No server and no network: the page works from ``file://``.
Builders other than HTML get static tables instead.

The table of a tree is built once per build (the build's state keeps it) and
kept on the environment,
checked against the tree's files like the analyses (:mod:`.cache`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging

from sphinxext_attn.model.environment import REFERENCE, Environment, known_platforms
from sphinxext_attn.model.json_value import JsonObject, JsonValue
from sphinxext_attn.model.plugin import Plugins
from sphinxext_attn.model.selection import OPTION_FIELDS
from sphinxext_attn.model.selector_shape import (
    GRID,
    LAYER_GRID,
    SelectorData,
    Shipped,
    query_value,
)
from sphinxext_attn.render import selector_html
from sphinxext_attn.render.nodes import TableSpec
from sphinxext_attn.selector.table import SelectorTable, build_selector_table
from sphinxext_attn.sphinx import cache, trees
from sphinxext_attn.sphinx.build_state import state_of
from sphinxext_attn.sphinx.directives import AttentionBackendsDirective
from sphinxext_attn.sphinx.options import COMMON_OPTIONS, platforms_option

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment
    from sphinx.writers.html5 import HTML5Translator

logger = logging.getLogger(__name__)

JS_FILE = "attention_backends_selector.js"
#: the table's reading (decisions, platforms, settings), loaded before JS_FILE
TABLE_JS_FILE = "attention_backends_selector_table.js"
CSS_FILE = "attention_backends_selector.css"
STATIC = Path(__file__).resolve().parent.parent
#: words accepted for the empty (None) value of a dimension
NONE_WORDS = ("", "none", "default", "unknown")


class attn_selector(nodes.General, nodes.Element):  # noqa: N801  (docutils node naming)
    """The selector: ``html`` for HTML builders, the children (static tables) elsewhere."""


def values_option(dim: str) -> Callable[[str | None], tuple[str, ...]]:
    """A converter narrowing ``dim`` to some of its default values (query spelling)."""
    allowed = [query_value(v) for v in GRID[dim]]
    flag = allowed == ["false", "true"]
    shown = ", ".join(a or "none" for a in allowed)

    def convert(value: str | None) -> tuple[str, ...]:
        words = (value or "").replace(",", " ").split()
        if not words:
            if flag:  # ``:mla:`` alone: the flag set
                return ("true",)
            raise ValueError(f"give one or more of {shown}")
        out = []
        for word in words:
            canon = "" if word.lower() in NONE_WORDS and "" in allowed else word.lower()
            match = [a for a in allowed if a.lower() == canon]
            if not match:
                raise ValueError(f"{word!r} is not one of {shown}")
            if match[0] not in out:
                out.append(match[0])
        return tuple(sorted(out, key=allowed.index))

    return convert


def table_of(
    env: BuildEnvironment,
    root: str,
    platforms: Sequence[str] = ("cuda",),
    environment: Environment = REFERENCE,
    requests: bool = False,
) -> SelectorTable:
    """The selector tables of ``root`` for ``platforms`` in ``environment`` (with
    ``requests``: the answers to a backend asked for too): memo, then the build
    environment, then built."""
    stored = getattr(env, "attention_backends_selector", None)
    if stored is None:
        stored = env.attention_backends_selector = {}  # type: ignore[attr-defined]
    plugins = state_of(env).plugins_of(root)
    key = table_key(root, platforms, environment, plugins) + ("|requests" if requests else "")
    memo = state_of(env).selector_tables
    for candidate in (memo.get(key), stored.get(key)):
        if candidate is not None and cache.fingerprint(root, candidate[1]) == candidate[0]:  # type: ignore[arg-type]
            break
    else:
        built = build_selector_table(
            root, platforms=platforms, environment=environment, requests=requests, plugins=plugins
        )
        candidate = (cache.fingerprint(root, built), built)  # type: ignore[arg-type]
        if built.table is not None:
            same, chosen, total = built.agreement
            size = len(json.dumps(built.shipped(), separators=(",", ":")))
            logger.info(
                f"attention-backends-selector: {root}: table of {size // 1024} KB built in "
                f"{built.seconds:.1f} s; it agrees with full decisions on {same}/{total} "
                f"sampled configurations (selected backend: {chosen}/{total})"
            )
    memo[key] = stored[key] = candidate
    return candidate[1]


def table_key(
    root: str, platforms: Sequence[str], environment: Environment, plugins: Plugins = ()
) -> str:
    """The memo key: the tree alone for the reference CUDA selector (as before); the
    plugin folders read with it, if any (a table read without them is another)."""
    extra = [",".join(platforms)] if tuple(platforms) != ("cuda",) else []
    extra += [environment.key()] if environment.key() else []
    extra += ["plugins=" + ",".join(str(p.folder) for p in plugins)] if plugins else []
    return "|".join([root, *extra])


class SelectorDirective(AttentionBackendsDirective):
    """``attention-backends-selector``: form controls and the decision they lead to."""

    option_spec: ClassVar[dict[str, Callable[[str], Any]]] = {
        "root": COMMON_OPTIONS["root"],
        "class": directives.class_option,
        "name": directives.unchanged,
        "caption": directives.unchanged_required,
        "platforms": platforms_option,
        "env": COMMON_OPTIONS["env"],
        "option": COMMON_OPTIONS["option"],
        "assume": COMMON_OPTIONS["assume"],
        "backend-control": directives.flag,
        **{opt: values_option(dim) for opt, dim in OPTION_FIELDS.items()},
    }

    def run(self) -> list[nodes.Node]:
        root = self.tree_root()
        if root is None:
            trees.warn_no_root(self.env)
            return []
        environment = self.environment()
        platforms = self.options.get("platforms") or (environment.platform,)
        known = known_platforms(state_of(self.env).every_plugin)
        unknown = [name for name in platforms if name not in known]
        if unknown:
            raise self.error(
                f":platforms: {', '.join(unknown)} unknown; choose from {', '.join(known)} "
                "(a plugin's platform needs the plugin in attention_backends_plugins)"
            )
        base = Environment(environment.env, environment.options, environment.assume)
        built = table_of(self.env, root, platforms, base, "backend-control" in self.options)
        for rel in built.files:
            path = os.path.join(root, rel)
            if os.path.isfile(path):
                self.env.note_dependency(path)
        if built.table is None:
            where, _, why = built.error.partition(": ")
            path = os.path.join(root, where) if where else root
            logger.warning(
                f"attention-backends-selector: not available for this tree: {why} ({path})",
                location=self.get_location(),
                type=cache.WARNING_TYPE,
                subtype="selector",
            )
            para = nodes.paragraph(
                "",
                f"The backend selector is not available for this tree ({why}, {where or root}).",
                classes=["attn-selector-unavailable"],
            )
            return [para]
        for problem in built.problems:
            logger.info(
                f"attention-backends-selector: {problem}; the page offers the other platforms",
                location=self.get_location(),
            )
        allowed = self.allowed(built.table)
        for variant in built.variants.values() or [built.table]:
            for dim, values in variant["dims"]:  # the KV connector, ...: where code reads it
                if dim in LAYER_GRID and dim not in allowed:
                    allowed[dim] = values
        node = attn_selector()
        table = built.table.copy()
        table["caps"] = {c: built.table["caps"][c] for c in allowed["capability"]}
        if "states" in table:  # the settings' entries of the capabilities offered only
            offered = table["caps"]
            table["states"] = {
                key: {
                    **state,
                    "caps": {c: e for c, e in state.get("caps", {}).items() if c in offered},
                }
                for key, state in table["states"].items()
            }
        rules = self.head_rules(root, table)
        if rules:
            table["head_rules"] = rules
        ident = f"attn-selector-{self.env.new_serialno('attn-selector')}"
        shipped: Shipped = table
        if len(built.variants) > 1:  # (the page's own table as the default's)
            shipped = {
                "variants": {**built.variants, built.default: table},
                "default": built.default,
            }
        node["html"] = selector_html.selector_html(
            ident,
            shipped,
            allowed,
            self.defaults(allowed),
            caption=self.options.get("caption"),
            classes=self.options.get("class", []),
            problems=built.problems,
        )
        spec = TableSpec(caption=self.options.get("caption"), classes=[])
        node.extend(selector_html.fallback_nodes(table, allowed["capability"], spec))
        return self.labelled([node])

    def allowed(self, table: SelectorData) -> dict[str, Sequence[str]]:
        grid = {dim: values for dim, values in table["dims"]}
        out: dict[str, Sequence[str]] = {}
        for opt, dim in OPTION_FIELDS.items():
            out[dim] = self.options.get(opt) or tuple(grid[dim])
        out["capability"] = [c for c in out["capability"] if c in table["caps"]]
        if not out["capability"]:
            raise self.error(f"{self.name}: none of the capabilities was evaluated")
        return out

    def head_rules(self, root: str, table: SelectorData) -> JsonObject:
        """Each backend's exact head-size rule ("any", or ints and ``{min, max,
        multiple_of}`` rules), so the widget answers head sizes the grid does not
        hold. Only where the analysis states head sizes as exact sets (issue 23's
        ``runtime.head_sizes``; before it they were a sample), and only for a
        backend whose rows all give the same rule (the backends one may ask for
        too, on a page with the backend control)."""
        if importlib.util.find_spec("sphinxext_attn.runtime.head_sizes") is None:
            return {}
        names = {n for cap in table["caps"].values() for n in cap["backends"]}
        names |= {n for cap in table["caps"].values() for n in cap.get("requests", {})}
        analysis = self.analysis_of(root, "runtime")
        found: dict[str, list[JsonValue]] = {}
        for row in analysis.backends:
            if row.name in names:
                found.setdefault(row.name, []).append(row.supports.get("head_sizes"))
        out: JsonObject = {}
        for name, rules in found.items():
            first = rules[0]
            if first is not None and all(r == first for r in rules):
                out[name] = first
        return out

    @staticmethod
    def defaults(allowed: dict[str, Sequence[str]]) -> dict[str, str]:
        """Where the controls start: vLLM's usual values where allowed (9.0, bf16, ...)."""
        base = {"capability": "9.0", "dtype": "bf16", "kv_cache_dtype": "auto"}
        base.update(head_size="128", block_size="", num_heads="", attn_type="DECODER")
        out = {}
        for dim, values in allowed.items():
            want = base.get(dim, "false")
            out[dim] = want if want in values else values[0]
        return out

    def labelled(self, out: list[nodes.Node]) -> list[nodes.Node]:
        if "name" in self.options:
            self.add_name(out[0])
        return out


# -- builders ---------------------------------------------------------------------


def visit_html(translator: HTML5Translator, node: attn_selector) -> None:
    ids: list[str] = node.get("ids", [])
    anchors = "".join(f'<span id="{i}"></span>' for i in ids)
    translator.body.append(anchors + node["html"])
    raise nodes.SkipNode


def static_for_other_builders(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Builders other than HTML: the selector becomes its static tables."""
    if app.builder.format == "html":
        return
    for node in list(doctree.findall(attn_selector)):
        node.replace_self(node.children or [nodes.paragraph()])


def page_context(
    app: Sphinx,
    pagename: str,
    templatename: str,
    context: dict[str, Any],
    doctree: nodes.document | None,
) -> None:
    """Pages with a selector load its script and style (and only those pages)."""
    if doctree is not None and any(True for _ in doctree.findall(attn_selector)):
        app.add_js_file(TABLE_JS_FILE)
        app.add_js_file(JS_FILE)
        app.add_css_file(CSS_FILE)


def copy_static(app: Sphinx, exception: BaseException | None) -> None:
    if exception is None and app.builder.format == "html":
        folder = Path(app.outdir, "_static")
        folder.mkdir(parents=True, exist_ok=True)
        for name in (TABLE_JS_FILE, JS_FILE, CSS_FILE):
            shutil.copyfile(STATIC / name, folder / name)


def merge_info(
    app: Sphinx, env: BuildEnvironment, docnames: Iterable[str], other: BuildEnvironment
) -> None:
    """Parallel reads: keep the tables a reader built."""
    theirs = getattr(other, "attention_backends_selector", None) or {}
    mine = getattr(env, "attention_backends_selector", None)
    if mine is None:
        mine = env.attention_backends_selector = {}  # type: ignore[attr-defined]
    for root, entry in theirs.items():
        mine.setdefault(root, entry)


def prime(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """Parallel reads: build the table once, before the readers fork.

    Pages are found by their text (a cheap scan of the sources to be read);
    the table of the build's tree is then in the memo every reader inherits.
    """
    if app.parallel <= 1 or not docnames:
        return
    root = trees.build_root(env)
    if root is None:
        return
    for docname in docnames:
        try:
            text = Path(env.doc2path(docname)).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if "attention-backends-selector" in text:
            table_of(env, root)
            return


def setup_selector(app: Sphinx) -> None:
    app.add_node(attn_selector, html=(visit_html, None))
    app.add_directive("attention-backends-selector", SelectorDirective)
    app.connect("doctree-resolved", static_for_other_builders)
    app.connect("html-page-context", page_context)
    app.connect("build-finished", copy_static)
    app.connect("env-merge-info", merge_info)
    app.connect("env-before-read-docs", prime)


__all__ = ["SelectorDirective", "attn_selector", "setup_selector"]
