"""What the runtime reader hands on for one class: a typed record (no dict of magic keys)."""

from __future__ import annotations

from treebuilder import DEMO_TREE

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.columns import ASKED
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.runtime.class_answers import ClassAnswers
from sphinxext_attn.runtime.merge import evaluate_runtime
from sphinxext_attn.source.tree import SourceTree


def test_every_page_column_is_answered_or_unknown():
    answers = evaluate_runtime(SourceTree(DEMO_TREE))
    assert answers.backends
    for entry, _, facts in answers.backends:
        assert isinstance(facts, ClassAnswers), entry.name
        for column in ASKED:
            assert column.title in facts.cells, (entry.name, column.title)
            if facts.cells[column.title] is not None:
                assert column.title not in facts.unknown, (entry.name, column.title)
        assert set(facts.limited) <= set(facts.unknown)
        assert set(facts.sources) <= {c.title for c in ASKED}


def test_a_class_that_cannot_be_evaluated_leaves_every_column_unknown():
    columns = [c.title for c in ASKED] + ["MLA"]
    hostile = ClassAnswers.not_evaluated(columns, "nesting too deep", limited=True)
    assert hostile.unknown == dict.fromkeys(columns, "nesting too deep")
    assert hostile.limited == columns and hostile.mla is None and not hostile.cells
    plain = ClassAnswers.not_evaluated(columns, "a call into torch", limited=False)
    assert plain.limited == [] and list(plain.unknown) == columns


def test_block_sizes_by_gpu_are_kept_only_where_the_supported_gpus_differ():
    from sphinxext_attn.runtime.profile import RuntimeReader, resolve_class
    from sphinxext_attn.source.registry import read_registry

    tree = SourceTree(DEMO_TREE)
    interp = Interpreter(tree, Machine())
    reader = RuntimeReader(interp)
    for entry in read_registry(tree):
        cls = resolve_class(interp, entry)
        if cls is None:
            continue
        facts = reader.safe_facts(entry, cls)
        by_gpu = facts.blocks_by_gpu
        assert by_gpu is None or len({tuple(v) for v in by_gpu.values()}) > 1, entry.name
