"""``:columns:`` in rST and MyST: the release's later page columns by default, and
every capability its backend interface declares on request (else an error that
names the allowed ones)."""

from __future__ import annotations

from pathlib import Path

import pytest
from attn_sphinx_util import build, page_tables, warnings
from runtime_trees import BACKEND_INTERFACE
from treebuilder import backend_source, dedent, one_backend

from sphinxext_attn.vocab.paths import GENERATORS

OLD_GENERATOR = GENERATORS[0]
GENERATOR = '_COL_DCP = ("DCP", lambda b: b["supports_dcp"])\n'
INTERFACE = backend_source("AttentionBackend", "pass\n", bases="").replace("()", "") + (
    "\n    @classmethod\n    def supports_sliding_window(cls):\n        return False\n"
)
BODY = "@classmethod\ndef supports_sliding_window(cls):\n    return True\n"

RST = """Index
=====

.. attention-backends-standard::
   :columns: Backend, Sliding Window, DCP
"""
MYST = """# Index

```{attention-backends-standard}
:columns: Backend, Sliding Window, DCP
```
"""


def _tree(tmp_path: Path) -> Path:
    return one_backend(
        tmp_path / "tree",
        BODY,
        extra={BACKEND_INTERFACE: INTERFACE, OLD_GENERATOR: dedent(GENERATOR)},
    )


def _site(tmp_path: Path, name: str, text: str) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["sphinxext_attn", "myst_parser"]\n')
    (src / name).write_text(text)
    return src


@pytest.mark.parametrize(("name", "text"), [("index.rst", RST), ("index.md", MYST)])
def test_capability_columns_on_request(make_app, tmp_path, name, text):
    if name.endswith(".md"):
        pytest.importorskip("myst_parser")
    app = build(make_app, _site(tmp_path, name, text), tree=_tree(tmp_path))
    assert warnings(app) == ""
    (table,) = page_tables(app, "index")
    assert table.header == ["Backend", "Sliding Window", "DCP"]
    mine = next(r for r in table.rows if r[0] == "`MY_ATTN`")
    assert mine[1:] == ["✅", "❌"]


@pytest.mark.parametrize("fmt", ["rst", "md"])
def test_capability_the_release_lacks_is_an_error(make_app, tmp_path, fmt):
    if fmt == "md":
        pytest.importorskip("myst_parser")
    text = (RST if fmt == "rst" else MYST).replace("Sliding Window", "KV Connector")
    app = build(make_app, _site(tmp_path, f"index.{fmt}", text), tree=_tree(tmp_path))
    text = warnings(app)
    assert "ERROR" in text and "KV Connector" in text
    assert "choose from" in text and "Sliding Window" in text and "Compute Cap." in text
    assert "Traceback" not in text


def test_unknown_column_names_every_possible_one(make_app, tmp_path):
    app = build(
        make_app,
        _site(tmp_path, "index.rst", RST.replace("Sliding Window", "Colour")),
        tree=_tree(tmp_path),
    )
    text = warnings(app)
    assert "unknown column 'Colour'" in text and "Batch Invariance" in text


def test_default_columns_follow_the_release_page(make_app, tmp_path):
    text = RST.replace("   :columns: Backend, Sliding Window, DCP\n", "")
    app = build(make_app, _site(tmp_path, "index.rst", text), tree=_tree(tmp_path))
    (table,) = page_tables(app, "index")
    assert "DCP" in table.header and "Non-Causal" not in table.header
    assert table.header.index("DCP") == table.header.index("MM Prefix") + 1
    assert "Sliding Window" not in table.header
