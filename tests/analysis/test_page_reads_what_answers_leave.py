"""The runtime profile's page reader reads only what the class's answers leave to it
(``analysis/units._answered``, ``page/backends.analyze_backend(answered=...)``)."""

from __future__ import annotations

from treebuilder import one_backend

from sphinxext_attn.analysis.units import _answered
from sphinxext_attn.model.records import Location
from sphinxext_attn.page.backends import EXTRA_FLAGS, analyze_backend
from sphinxext_attn.runtime.class_answers import BackendAnswer, ClassAnswers
from sphinxext_attn.source.classes import ClassFinder
from sphinxext_attn.source.registry import RegistryEntry, read_registry
from sphinxext_attn.source.tree import SourceTree

BODY = """
@staticmethod
def get_supported_kernel_block_sizes():
    return [16, 32]

@classmethod
def get_supported_head_sizes(cls):
    return [64, 128]

@classmethod
def supports_sink(cls):
    return True

@classmethod
def is_mla(cls):
    return True
"""


def _entry(tree: SourceTree, name: str) -> RegistryEntry:
    return next(e for e in read_registry(tree) if e.name == name)


def test_answered_cells_are_not_read(tmp_path):
    tree = SourceTree(one_backend(tmp_path, BODY))
    entry = _entry(tree, "MY_ATTN")
    full = analyze_backend(tree, ClassFinder(tree), entry)
    assert full is not None
    assert (full.block_sizes, full.supports_sink) == (("16", "32"), True)
    answered = {"Block Sizes", "Sink", "DCP", EXTRA_FLAGS}
    lite = analyze_backend(tree, ClassFinder(tree), entry, answered=answered)
    assert lite is not None
    # answered: the record's defaults, no place, no extras
    assert (lite.block_sizes, lite.supports_sink, lite.extras) == ((), False, {})
    assert not {"Block Sizes", "Sink", "DCP"} & set(lite.sources)
    # the rest as the full reading has it, the literal is_mla (the row's table) included
    assert lite.head_sizes == full.head_sizes == ("64", "128")
    assert lite.is_mla and lite.table == full.table
    assert lite.sources["Head Sizes"] == full.sources["Head Sizes"]


def _answers(entry: RegistryEntry, **cells: object) -> BackendAnswer:
    facts = ClassAnswers()
    facts.cells.update({k.replace("_", " "): v for k, v in cells.items()})
    facts.sources["Dtypes"] = Location("x.py", 3)
    return BackendAnswer(entry, Location("x.py", 1), facts)


def test_what_the_answers_leave_to_the_page(tmp_path):
    tree = SourceTree(one_backend(tmp_path, BODY))
    entry = _entry(tree, "MY_ATTN")
    answers = _answers(entry, Dtypes=["fp16"], DCP=True, Sink=None)
    # no answers (the class was not built): everything is read
    assert _answered(entry, None, False, False) == frozenset()
    # an unknown cell (None) is read; the answered ones and the extra flags are not
    assert _answered(entry, answers, False, False) == {"Dtypes", "DCP", EXTRA_FLAGS}
    # with places shown, an answered cell without its place is read for the place
    assert _answered(entry, answers, True, False) == {"Dtypes", EXTRA_FLAGS}
    # without vLLM's generator the rows' own DCP flags decide whether the column shows
    assert _answered(entry, answers, False, True) == {"Dtypes", EXTRA_FLAGS}


def test_the_variant_rule_keeps_its_cells(tmp_path):
    tree = SourceTree(one_backend(tmp_path, BODY, name="FLASH_ATTN"))
    entry = _entry(tree, "FLASH_ATTN")
    answers = _answers(entry, Dtypes=["fp16"], Sink=True, Head_Sizes=["64"])
    assert _answered(entry, answers, False, False) == {"Dtypes", EXTRA_FLAGS}
