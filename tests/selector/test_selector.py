"""``attention-backends-selector``: the factored table, the page, other builders, a browser.

The table of vLLM 0.33.0 is built once per test process (the directive's memo
keeps it); every Sphinx build here reuses it.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import vllm_trees
from attn_sphinx_util import MINI_TREE, sphinx_project
from known import assert_exactly
from sphinx.testing.util import SphinxTestApp
from treebuilder import DEMO_TREE

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.selection import Config
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.selector.grid import GRID, query_value
from sphinxext_attn.selector.predict import agreement, predict, sample_configs
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.sphinx.build_state import state_of

CONTROLS = (
    "capability",
    "dtype",
    "kv_cache_dtype",
    "head_size",
    "block_size",
    "num_heads",
    "attn_type",
    "use_mla",
    "use_sparse",
    "has_sink",
    "use_mm_prefix",
    "use_non_causal",
)
PAGES = {
    "index": "Selector\n========\n\n.. attention-backends-selector::\n   :name: pick\n",
    "narrow": (
        "Narrow\n======\n\n.. attention-backends-selector::\n"
        "   :capability: 9.0 10.0\n   :head-size: 64, 128\n   :block-size: default 16\n"
        "   :mla: false\n"
    ),
}


def _project(dest: Path, pages: dict[str, str]) -> Path:
    return sphinx_project(dest, pages, toctree=True)


def _build(src: Path, builder: str, root: Path, out: Path) -> tuple[Any, str]:
    warning = StringIO()
    app = SphinxTestApp(
        builder,
        srcdir=src,
        builddir=out,
        confoverrides={"attention_backends_root": str(root)},
        status=StringIO(),
        warning=warning,
    )
    try:
        app.build()
    finally:
        app.cleanup()
    return app, warning.getvalue()


@pytest.fixture(scope="module")
def tree033() -> Path:
    return vllm_trees.tree("0.33.0")


@pytest.fixture(scope="module")
def site_app(tree033: Path, tmp_path_factory: pytest.TempPathFactory) -> SphinxTestApp:
    """A built small project with the selector (default and narrowed)."""
    base = tmp_path_factory.mktemp("selector-site")
    src = _project(base, PAGES)
    app, warnings = _build(src, "html", tree033, base / "_build")
    assert "WARNING" not in warnings, warnings
    return app


@pytest.fixture(scope="module")
def site(site_app: SphinxTestApp) -> Path:
    """The HTML of that project."""
    return Path(site_app.outdir)


@pytest.mark.realtree
@pytest.mark.slow
def test_page_is_light_and_labelled(site: Path) -> None:
    page = site / "index.html"
    assert page.stat().st_size < 2_000_000
    html = page.read_text(encoding="utf-8")
    for name in CONTROLS:
        found = re.search(rf'<(?:select|input)[^>]* id="([^"]+)"[^>]* name="{name}"', html)
        assert found, name
        assert f'<label for="{found.group(1)}">' in html, name
    assert 'aria-live="polite"' in html
    assert "attention_backends_selector.js" in html
    assert (site / "_static" / "attention_backends_selector.js").is_file()
    assert (site / "_static" / "attention_backends_selector_table.js").is_file()
    assert html.index("attention_backends_selector_table.js") < html.index(
        "attention_backends_selector.js"
    )
    assert (site / "_static" / "attention_backends_selector.css").is_file()
    assert 'id="pick"' in html
    # the default grid is offered: every capability, head size, ...
    for value in ("8.0", "12.0", "576", "fp8_e5m2", "ENCODER_DECODER"):
        assert f'<option value="{value}"' in html


@pytest.mark.realtree
@pytest.mark.slow
def test_options_narrow_the_controls(site: Path) -> None:
    html = (site / "narrow.html").read_text(encoding="utf-8")
    capabilities = re.findall(r'<option value="(\d+\.\d)"', html)
    assert capabilities == ["9.0", "10.0"]
    # head size and capability are free input; the offered values are their suggestions
    head = re.search(r'name="head_size"[^>]*><datalist[^>]*>(.*?)</datalist>', html).group(1)
    assert re.findall(r'value="(\d+)"', head) == ["64", "128"]
    mla = re.search(r'<input[^>]*name="use_mla"[^>]*>', html).group(0)
    assert "disabled" in mla and "checked" not in mla
    data = json.loads(re.search(r'class="attn-selector-data">(.*?)</script>', html, re.S).group(1))
    assert sorted(data["caps"]) == ["10.0", "9.0"]


def test_js_page_not_on_pages_without_selector(tmp_path: Path) -> None:
    src = _project(tmp_path, {"index": "Plain\n=====\n\nNo selector here.\n"})
    app, warnings = _build(src, "html", DEMO_TREE, tmp_path / "_build")
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    assert "attention_backends_selector.js" not in html


@pytest.mark.realtree
@pytest.mark.slow
@pytest.mark.parametrize("builder", ["text", "latex", "man"])
def test_other_builders_get_static_tables(
    builder: str, tree033: Path, tmp_path: Path, site: Path
) -> None:
    src = _project(tmp_path, {"index": PAGES["index"]})
    app, warnings = _build(src, builder, tree033, tmp_path / "_build")
    assert "WARNING" not in warnings, warnings
    text = "\n".join(
        p.read_text(encoding="utf-8")
        for p in Path(app.outdir).rglob("*")
        if p.is_file() and p.suffix in (".txt", ".tex", ".1")
    )
    assert "<select" not in text and "attn-selector-data" not in text
    assert "FLASH" in text and "TRITON" in text.replace(r"\_", "_")
    assert "Priority list" in text and "Rejects" in text


def test_bad_option_names_the_allowed_values(tmp_path: Path) -> None:
    page = "Bad\n===\n\n.. attention-backends-selector::\n   :capability: 7.5\n"
    src = _project(tmp_path, {"index": page})
    _, warnings = _build(src, "html", DEMO_TREE, tmp_path / "_build")
    assert "'7.5' is not one of 8.0, 8.6, 8.9, 9.0, 10.0, 10.3, 12.0" in warnings
    page = "Bad\n===\n\n.. attention-backends-selector::\n   :head-size: 100\n"
    src = _project(tmp_path / "b", {"index": page})
    _, warnings = _build(src, "html", DEMO_TREE, tmp_path / "b" / "_build")
    assert "64, 80, 96, 128, 192, 256, 512, 576" in warnings


def test_tree_without_selection_code_says_so(tmp_path: Path) -> None:
    src = _project(tmp_path, {"index": PAGES["index"]})
    app, warnings = _build(src, "html", MINI_TREE, tmp_path / "_build")
    assert "not available for this tree" in warnings
    assert re.search(r"\(/\S+\.py\)", warnings), "the warning names the file"
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    assert "not available for this tree" in html


# -- the factored table against full decisions -------------------------------------


def _in_grid(case: dict[str, Any]) -> bool:
    config = Config.from_case(case)
    return all(getattr(config, dim) in values for dim, values in GRID.items())


@pytest.fixture(scope="module")
def cases033() -> list[dict[str, Any]]:
    path = vllm_trees.shared_dir() / "vllm" / "select" / "select-0.33.0.json"
    cases: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return [c for c in cases if _in_grid(c)]


@pytest.fixture(scope="module")
def table033(tree033: Path, site_app: SphinxTestApp) -> dict[str, Any]:
    built = state_of(site_app.env).selector_tables[str(tree033)][1]
    assert built.table is not None
    return built.table


@pytest.mark.realtree
@pytest.mark.slow
def test_factorisation_agrees_with_decide(
    table033: dict[str, Any], tree033: Path, cases033: list[dict[str, Any]]
) -> None:
    selector = Selector(Interpreter(SourceTree(tree033), Machine()))
    configs = [Config.from_case(c) for c in cases033]
    _, _, total, differ = agreement(table033, selector, configs)
    assert total == len(cases033) > 500
    assert_exactly([c.describe() for c in differ], "selector-table", "0.33.0-cases")
    _, _, total, differ = agreement(table033, selector, sample_configs(GRID, 300, 7))
    assert total == 300
    assert_exactly([c.describe() for c in differ], "selector-table", "0.33.0-sample")


#: vLLM 0.33.0 on SM 9.0, sparse MLA with an fp8 KV cache: every backend that could take
#: it is refused but FLASHINFER_MLA_SPARSE_SM90, whose check asks the installed
#: FlashInfer's signature (inspect.signature): the decision rests on that probe.
PROBED = Config(
    capability="9.0",
    dtype="bf16",
    kv_cache_dtype="fp8_e4m3",
    head_size=576,
    use_mla=True,
    use_sparse=True,
)


@pytest.mark.realtree
def test_the_table_gives_a_pick_that_rests_on_a_feature_probe_as_the_decision_does(
    selector_tables_033: dict[tuple[str, str], dict[str, Any]], tree033: Path
) -> None:
    """The widget's data read back (predict, which the JS mirrors) gives the pick the
    full decision gives, where it rests on the pinned FlashInfer's feature probe
    (settled: the reference machine's FlashInfer has it). The table is the page's
    (``build_variant`` of CUDA, as the directive builds it), shared with the other
    modules (conftest.py)."""
    table033 = selector_tables_033[("cuda", "")]
    guess = predict(table033, PROBED)
    truth = Selector(Interpreter(SourceTree(tree033), Machine())).decide(PROBED)
    assert guess is not None and guess.candidates == [] and truth.candidates == []
    assert guess.selected == truth.selected == "FLASHINFER_MLA_SPARSE_SM90"
    assert "features.flashinfer=true" in truth.assumptions
    # with a pick ahead of it (bf16 KV: FLASH_ATTN_MLA_SPARSE first), the same pick
    definite = predict(table033, Config(**{**PROBED.__dict__, "kv_cache_dtype": "auto"}))
    assert definite is not None and definite.selected == "FLASH_ATTN_MLA_SPARSE"


# -- in a browser ----------------------------------------------------------------


def _query(case: dict[str, Any]) -> str:
    config = Config.from_case(case)
    return "&".join(f"{k}={query_value(getattr(config, k))}" for k in CONTROLS)


def _dom(browser: Any, url: str) -> str:
    """The page at ``url`` once loaded (its scripts run on DOMContentLoaded and load),
    in the session's Chromium (tests/conftest.py)."""
    page = browser.new_page()
    try:
        page.goto(url)
        page.wait_for_load_state("load")
        html: str = page.content()
    finally:
        page.close()
    return html


def _shown(html: str) -> str:
    if 'class="attn-conditional"' in html:
        return "conditional"
    found = re.search(r'class="attn-selected">([^<]*)<', html)
    assert found, html[-2000:]
    return found.group(1)


@pytest.mark.realtree
@pytest.mark.browser
def test_browser_shows_the_cli_decision(
    browser: Any,
    site: Path,
    tree033: Path,
    cases033: list[dict[str, Any]],
    table033: dict[str, Any],
) -> None:
    selector = Selector(Interpreter(SourceTree(tree033), Machine()))
    picked: list[dict[str, Any]] = []
    for case in cases033:  # a spread: each selected backend (and none) once, then more
        if case["selected"] not in {c["selected"] for c in picked}:
            picked.append(case)
    picked += [c for c in cases033 if c not in picked][: max(0, 14 - len(picked))]
    # and cases decided only with a triple of settings' corrections (the JS reads them too)
    pairs_only = copy.deepcopy(table033)
    for cap in pairs_only["caps"].values():
        for entry in cap["backends"].values():
            entry["joint"] = {k: v for k, v in entry["joint"].items() if k.count(",") == 1}
    by_triples = [
        c
        for c in cases033
        if predict(table033, Config.from_case(c)).selected
        != predict(pairs_only, Config.from_case(c)).selected
    ]
    assert by_triples, "no case's pick needs a triple: the test would not reach that code"
    picked += [c for c in by_triples[:3] if c not in picked]
    assert len(picked) >= 10
    for case in picked:
        config = Config.from_case(case)
        decision = selector.decide(config)
        cli = decision.selected
        assert predict(table033, config).selected == cli
        url = (site / "index.html").as_uri() + "?" + _query(case)
        shown = "conditional" if decision.candidates else (cli or "none")
        assert _shown(_dom(browser, url)) == shown, url
        assert cli == case["selected"], (config.describe(), cli, case["selected"])


CHANGE_CONTROLS = """<script>
window.addEventListener("load", function () {
  var box = document.querySelector(".attn-selector");
  var cap = box.querySelector('[name="capability"]');
  cap.value = "8.9";
  cap.dispatchEvent(new Event("change", {bubbles: true}));
  var mla = box.querySelector('[name="use_mla"]');
  mla.checked = true;
  mla.dispatchEvent(new Event("change", {bubbles: true}));
  var out = document.createElement("pre");
  out.id = "probe-search";
  out.textContent = window.location.search;
  document.body.appendChild(out);
});
</script>
</body>"""


@pytest.mark.realtree
@pytest.mark.browser
def test_browser_changing_a_control_updates_decision_and_address(
    browser: Any, site: Path, tree033: Path
) -> None:
    """A reader's change recomputes the decision and is written to the query string."""
    page = site / "index.html"
    probe = site / "changed.html"
    probe.write_text(
        page.read_text(encoding="utf-8").replace("</body>", CHANGE_CONTROLS), encoding="utf-8"
    )
    url = probe.as_uri() + "?dtype=fp16"
    cli = Selector(Interpreter(SourceTree(tree033), Machine())).decide(
        Config(capability="8.9", dtype="fp16", use_mla=True)
    )
    html = _dom(browser, url)
    assert _shown(html) == (cli.selected or "none")
    search = re.search(r'id="probe-search">([^<]*)<', html).group(1).replace("&amp;", "&")
    for part in ("dtype=fp16", "capability=8.9", "use_mla=true", "block_size=&"):
        assert part in search, search


def test_selector_on_the_older_shape_of_rejections(tmp_path: Path) -> None:
    """Before vLLM 0.18 rejected backends came without their priority: the page
    builds as on the newer shape (it stopped the build with a traceback)."""
    tree = tmp_path / "tree"
    shutil.copytree(DEMO_TREE, tree)
    cuda = tree / "vllm" / "platforms" / "cuda.py"
    text = cuda.read_text(encoding="utf-8")
    old = "invalid[backend] = (priority, reasons)"
    assert old in text
    cuda.write_text(text.replace(old, "invalid[backend] = reasons"), encoding="utf-8")
    pages = {"index": PAGES["narrow"].replace("Narrow\n======", "Old\n===")}
    new_app, new_warnings = _build(
        _project(tmp_path / "new", pages), "html", DEMO_TREE, tmp_path / "n"
    )
    old_app, old_warnings = _build(_project(tmp_path / "old", pages), "html", tree, tmp_path / "o")
    assert old_warnings == new_warnings.replace(str(DEMO_TREE), str(tree))
    data = re.compile(r'<script type="application/json"[^>]*>(.*?)</script>', re.S)
    new_html = (Path(new_app.outdir) / "index.html").read_text(encoding="utf-8")
    old_html = (Path(old_app.outdir) / "index.html").read_text(encoding="utf-8")
    assert data.findall(new_html) and data.findall(old_html) == data.findall(new_html)
