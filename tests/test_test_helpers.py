"""The test suite's own machinery: containment of hangs (tests/containment.py) and the
``deps`` marker (tests/dependency_use.py), which decides what ``tox -e oldest`` and
``-e newest`` run."""

from __future__ import annotations

import itertools
from pathlib import Path

import dependency_use
import pytest
from containment import CAN_CONTAIN, contain, note, progress

TESTS = Path(__file__).resolve().parent

needs_fork = pytest.mark.skipif(not CAN_CONTAIN, reason="containment needs fork() and /proc")


def _spin_at_third(items: list[str]) -> None:
    for i, item in enumerate(items):
        progress(item)
        note(f"started {i}")
        if i == 2:
            for _ in itertools.count():  # a hang the parent must contain
                pass


def _raise() -> None:
    progress("only")
    raise ValueError("broken")


@needs_fork
def test_a_hang_is_killed_and_named_with_what_was_noted():
    out = contain(_spin_at_third, ["a", "b", "c", "d"], idle=2.0)
    assert (out.kind, out.last) == ("hung", "c")
    assert out.notes == ["started 0", "started 1", "started 2"]


@needs_fork
def test_an_exception_and_a_value_come_back():
    out = contain(_raise, idle=60.0)
    assert (out.kind, out.last) == ("escaped", "only")
    assert out.detail.startswith("ValueError: broken")
    assert contain(sorted, [3, 1, 2], idle=60.0).value == [1, 2, 3]


def _hold(megabytes: int) -> int:
    block = bytearray(megabytes * 2**20)  # zero-filled: every page touched
    return len(block)


@needs_fork
def test_the_childs_peak_memory_is_what_it_allocated_not_what_it_inherited():
    big = contain(_hold, 96, idle=60.0, memory="resident")
    small = contain(_hold, 1, idle=60.0, memory="resident")
    assert big.value == 96 * 2**20
    assert 90 * 2**20 <= big.peak < 160 * 2**20, big.peak  # a few pages were resident
    assert small.peak < 32 * 2**20, small.peak  # the inherited heap is not counted


def test_progress_outside_a_child_does_nothing():
    progress("x")
    note("y")


def test_the_analysis_core_imports_no_sphinx():
    """The premise of the ``deps`` marker: only the Sphinx glue and the docutils renderers
    reach Sphinx, docutils or myst-parser."""
    facing = dependency_use.sphinx_facing()
    assert "sphinxext_attn.sphinx.setup" in facing and "sphinxext_attn.render.nodes" in facing
    core = ("pyeval", "source", "select", "runtime", "analysis", "model", "page")
    assert sorted(m for m in facing if m.split(".")[1] in core) == []
    assert "sphinxext_attn.render.markdown" not in facing


def test_deps_marks_what_uses_sphinx(tmp_path):
    def uses(text: str) -> bool:
        path = tmp_path / f"test_{abs(hash(text))}.py"
        path.write_text(text, encoding="utf-8")
        return dependency_use.uses_dependencies(path)

    assert uses("from docutils import nodes\n")
    assert uses("def f():\n    import myst_parser\n")
    assert uses("from sphinxext_attn.render.nodes import x\n")
    assert uses("import attn_sphinx_util\n")  # a helper that uses Sphinx
    assert uses("import subprocess\nsubprocess.run(['python', '-m', 'sphinx', 'a', 'b'])\n")
    assert not uses("from sphinxext_attn.pyeval import Interpreter\nimport treebuilder\n")
    assert not uses("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import sphinx\n")
    assert dependency_use.uses_dependencies(TESTS / "sphinx" / "test_sphinx_build.py")
    assert not dependency_use.uses_dependencies(TESTS / "pyeval" / "test_pyeval_expressions.py")


@pytest.mark.parametrize("module", sorted((TESTS / "sphinx").glob("test_*.py")), ids=str)
def test_every_sphinx_test_module_is_deps(module):
    assert dependency_use.uses_dependencies(module)


def test_only_listed_skips_pass_when_trees_are_required():
    """conftest.py fails a skip under ATTN_REQUIRE_TREES=1 unless its file and reason
    are on skips.ALLOWED_SKIPS; tox reports every skip (-rs)."""
    from skips import allowed_skip

    docs = "tests/sphinx/test_docs_site.py::test_html"
    assert allowed_skip(docs, "Skipped: the docs use the confval directive of Sphinx 7.4+")
    assert not allowed_skip(docs, "Skipped: no case files")
    assert not allowed_skip("tests/cli/test_bad_input.py::t", "Skipped: root")
    tox = (Path(__file__).resolve().parent.parent / "tox.ini").read_text(encoding="utf-8")
    runs = [line for line in tox.splitlines() if line.strip().startswith("pytest ")]
    assert runs and all(" -rs " in line for line in runs)
