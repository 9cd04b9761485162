"""Bad option values are directive errors at the page and line, naming what is allowed."""

from __future__ import annotations

from pathlib import Path

import pytest
from attn_sphinx_util import build, warnings


def _page(make_app, tmp_path: Path, body: str):
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["sphinxext_attn"]\n')
    (src / "index.rst").write_text("Index\n=====\n\n" + body)
    return build(make_app, src)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            ".. attention-backends-priority::\n   :category: gqa\n",
            ["gqa", "standard", "mla"],
        ),
        (
            ".. attention-backends-priority::\n   :arch: sm90\n",
            ["sm90", "sm100", "default"],
        ),
        (
            ".. attention-backends-standard::\n   :columns: Backend, Colour\n",
            ["Colour", "KV Dtypes", "Compute Cap.", "Non-Causal"],
        ),
        (
            ".. attention-backends-mla-prefill::\n   :columns: Backend, Sink\n",
            ["Sink", "Description", "Enable"],
        ),
        (
            ".. attention-backends-standard::\n   :backends: FLASH_ATTN, NOPE\n",
            ["NOPE", "FLASH_ATTN", "TRITON_ATTN", "FLASHINFER"],
        ),
        (
            ".. attention-backends-mla-decode::\n   :backends: FLASH_ATTN\n",
            ["FLASH_ATTN", "TRITON_MLA"],
        ),
        (
            ".. attention-backends-mla-decode::\n   :widths: 1, 2\n",
            ["2 widths", "10 columns", "Backend"],
        ),
        (
            ".. attention-backends-legend::\n   :widths: wide\n",
            ["auto", "grid"],
        ),
        (
            ".. attention-backends-standard::\n   :columns: Backend, Backend\n",
            ["twice"],
        ),
        (
            ".. attention-backends-priority::\n   :layout: grid\n",
            ["grid", "matrix", "lists"],
        ),
        (
            ".. attention-backends::\n   :layout: table\n",
            ["table", "matrix", "lists"],
        ),
    ],
)
def test_bad_values_name_the_allowed_ones(make_app, tmp_path, body, expected):
    app = _page(make_app, tmp_path, body)
    text = warnings(app)
    assert "ERROR" in text, text
    assert "index.rst:4" in text  # the page and the directive's line
    for word in expected:
        assert word in text, (word, text)
    assert "Traceback" not in text


def test_unknown_option_is_an_error(make_app, tmp_path):
    app = _page(make_app, tmp_path, ".. attention-backends-legend::\n   :colour: red\n")
    assert 'unknown option: "colour"' in warnings(app)


def test_good_values_pass(make_app, tmp_path):
    app = _page(
        make_app,
        tmp_path,
        ".. attention-backends-priority::\n   :category: mla\n   :arch: default\n"
        "   :columns: Backend\n\n"
        ".. attention-backends-standard::\n   :columns: kv dtypes, backend\n"
        "   :widths: auto\n\n"
        ".. attention-backends::\n   :backends: FLASH_ATTN, TRITON_MLA, FlashInfer\n"
        "   :caption: Some\n   :name: some\n   :widths: grid\n   :class: x\n",
    )
    assert warnings(app) == ""


def test_both_selection_directives_take_the_same_option_names():
    from sphinxext_attn.select.decision import LAYER_FIELDS, Config
    from sphinxext_attn.select.decision import OPTION_FIELDS as CONFIG_FIELDS
    from sphinxext_attn.sphinx.select_directive import CONFIG_OPTIONS, config_from_options
    from sphinxext_attn.sphinx.selector import SelectorDirective

    assert CONFIG_OPTIONS.keys() == CONFIG_FIELDS.keys() | LAYER_FIELDS.keys()
    assert CONFIG_FIELDS.keys() <= SelectorDirective.option_spec.keys()
    from sphinxext_attn.select.records import ENGINE_FIELDS

    layer = set(LAYER_FIELDS.values()) | set(ENGINE_FIELDS)  # (an engine option sets these)
    layer |= {"selected_backend"}  # the backend asked for: select --backend only
    assert set(CONFIG_FIELDS.values()) | layer == set(Config.__dataclass_fields__)
    config = config_from_options({"capability": "10.0", "mla": None, "head-size": 576})
    assert (config.capability, config.use_mla, config.head_size) == ("10.0", True, 576)
    assert not config.use_sparse and config.dtype == Config().dtype
