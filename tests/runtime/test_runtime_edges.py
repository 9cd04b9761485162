"""Edges of the runtime code a sampled mutation run found unpinned, each test
failing with the mutant it was written for.

Mutants argued equivalent (no input tells them from the product):
- priority_paths.defaults ``zip(..., strict=True)`` -> ``strict=False``: the
  parameters zipped are the last ``len(args.defaults)`` positional ones, and Python's
  grammar never gives more defaults than positional parameters, so the lengths match.
- head_sizes.head_size_answer ``ask.last_read & CAPABILITY`` -> ``*``: the mutant asks
  again per GPU after an unknown whose path read a fact but not the GPU; a path that
  never read the GPU runs alike for every GPU, so the first GPU meets the same unknown
  at the same place and it is raised as before (only the work is repeated).
- head_sizes._run_items ``covered != part.residues`` -> ``covered < part.residues``:
  a divisor's multiples join ``covered`` only when they lie in ``part.residues``, so
  ``covered`` is always a subset and "different" is "a proper subset".
- priority_titles._describe ``others[0].span`` -> ``others[-1].span``: taken only when
  ``len(others) == 1``, where both are the same item.
- full_check.FullCheck.run ``n == "device_capability"`` -> ``is``: ``n`` is a
  parameter name of the tree's ``supports_combination`` as ``ast.parse`` gives it (the
  parser interns every identifier; the check runs on trees parsed in-process, never
  on unpickled ones), and CPython interns the identifier-like literal, so the two agree.
- questions.Asker ``read_mask`` default ``0`` -> ``1`` (and ``assumed``'s reset
  ``0`` -> ``1``): bit 1 is ``CAPABILITY``, and
  ``assumed`` only passes the mask to ``facts_of``, which tests the fact bits ``2 << i``.
- questions.Asker.method ``interp.class_writes == key[1]`` -> ``is`` (``is not``, as
  ``!=`` below): ``key[1]`` is the very object read from ``interp.class_writes``;
  with no write since, the attribute still holds it, and after one they differ.
- questions.Asker.method ``interp.class_writes == key[1]`` -> ``>``, ``!=``, ``<`` or
  ``>=`` (the count only grows: an entry is kept under a stale count, or never): the
  mutant never
  hits its cache (``class_writes`` only grows, so an entry kept under the count before a
  write is never looked up again); looking up again a member that read nothing and
  wrote no class finds it in ``cls.attrs`` with no step, read or write, and binds the
  same function to the same class (a call unpacks the binding): only the work repeats.
- capability_points._pair ``len(node.elts) == 2`` -> ``<= 2``: a tuple of fewer items
  gives ``_ints`` fewer ints (one at most per item), so ``len(ints) == 2`` fails and
  the empty set is returned as before.
- deciding_lines._class_data ``t.id == name`` -> ``t.id is name`` (sample 59): both
  are identifiers of trees ``ast.parse`` gave in this process (``name`` an
  ``Attribute.attr``, ``t.id`` a ``Name.id``; no tree is unpickled or built by
  hand), and the parser interns every identifier, NFKC-normalised ones too, so
  equal strings are the same object.
- full_check.FullCheck.resolve ``method.func.owner is root`` -> ``==`` (sample 59):
  ``owner`` is a ``PyClass`` or None and ``root`` a ``PyClass``, a dataclass with
  ``eq=False`` (no subclass defines ``__eq__``), so ``==`` is identity.
- priority_titles._category ``name == CATEGORY`` -> ``name is CATEGORY`` (sample 59):
  ``name`` is a key of a run's ``reads``, which only ``Name.id``s of the priority
  function's body fill (``Frame.lookup`` of a ``Name``, the statement and check memos'
  plans), from trees ``ast.parse`` gave in this process (the build state holding
  trees pickles empty); the parser interns identifiers and CPython the
  identifier-like literal ``"use_mla"``, so equal strings are the same object.
- questions.Asker.ask ``not self.last_read & CAPABILITY`` -> ``// CAPABILITY`` (and
  ``*``, ``**``, ``<<``, ``/``: ``CAPABILITY`` is 1, so each tests "read anything"): they
  differ only after an unknown whose path read a fact but not the GPU; the mutant
  asks again per GPU, and a path that never read the GPU meets the same unknown on
  the first GPU, returned as before (as head_sizes above; only the work repeats).
- questions.Asker.has ``not read & CAPABILITY`` (the ``break``) -> ``not read *
  CAPABILITY`` (``**``, ``<<``, ``//``, ``/``): likewise after a look-up that raised having read a
  fact but not the GPU; it raises alike on every GPU and ``why`` keeps the first.
- questions.Asker._ask_strings ``stop[0]`` -> ``stop[-1]``: ``explore_strings`` checks
  ``stopped()`` before each round and a round calls ``alone`` once at most, so
  ``stop`` holds one answer when it is not empty; and ``alone``'s ``return False``
  after ``stop.append`` -> ``True``: with ``stop`` not empty the accepted indexes
  are dropped and ``stop[0]`` returned.
- questions.Asker.ask_each ``type(v) is str`` -> ``==``: the values' types are
  classes of metaclass ``type``, whose ``==`` is identity.
- questions.Asker.has ``guarded((self.cls.path, 0))`` -> ``(path, 1)`` or ``-1``: it wraps only
  ``self.method``, whose look-up runs inside ``interp.question`` at the same
  ``(path, 0)``, which turns a ``RecursionError`` into the limit first (pinned in
  test_questions_pins.py); the rest of ``method`` is dict work that recurses nowhere.
- priority_titles._describe ``len(others) == 1`` -> ``<= 1``: ``_words`` describes a
  parameter only when fewer values are allowed than tried, so ``others`` is never
  empty.
- cell_text._chains ``ordered[-1] + step + 1`` -> ``* step + 1``: with the largest
  size o >= 2 and a step s >= 2, o*s >= o+s, so the mutant only walks further past
  the largest size (no size of ``given``; the run was flushed at o+s); with o < 2
  neither range holds a multiple of s that ``given`` has.
- questions.Asker.ask_each ``zip(values, labels, strict=True)`` -> ``strict=False``:
  each caller (runtime/profile.py) builds both lists from one sequence (``DTYPES``,
  the attention types' pairs, the KV dtypes twice), so the lengths match.
- questions.Asker ``last_read`` default ``0`` -> ``1`` or ``-1``: only ``ask`` reads it,
  after ``call`` raised ``Unknown``, and ``call`` sets it in its ``finally`` once the
  question is open; nothing before that (a tuple of the class's path and line) raises.
- cell_text.capability_text ``chosen == set(points)`` -> ``>=``: ``points`` is
  ``told`` joined with ``caps``, so ``chosen`` is always a subset of it; and
  ``chosen == {c for c in points if c >= first}`` -> ``>=``: ``first`` is the least
  of ``chosen``, so ``chosen`` is a subset of that set too.
- cell_text.head_size_text ``len(items) == 1`` -> ``<= 1``: an empty list returned
  ``("None",)`` above, and with one item ``items[0]`` -> ``items[-1]`` is the same;
  ``len(sizes) == len(items)`` -> ``>=``: ``sizes`` is drawn from ``items``.
- questions.Asker ``read_mask`` (and ``last_read``) ``init=False`` -> ``True``: no
  caller passes it, so the default stands.
- questions.sorted_block_labels key ``not x.startswith("%")`` -> ``x.startswith``: a
  size a kept ``%N`` divides is dropped, and so is a ``%M`` a smaller kept step divides,
  so no two kept labels share a number and the second key never decides.
- questions.Asker.ask_each ``if values and all(...)`` -> ``if not values and ...``:
  the strings then go through the loop of single questions, whose answer
  ``_ask_strings`` gives by design with fewer runs (its contract: the same answer,
  the same facts read, in the same order); an empty list is ``[]`` either way.
- questions.Asker.capabilities ``found[0]`` -> ``found[-1]`` (sample 60): ``answered``
  holds ``None`` or the 1-tuple ``(value,)``, so both index the same item.
- declared.builder_cudagraph ``c.path.split("/", 1)[0]`` -> ``split("/", 2)[0]`` (sample 60): the
  first piece is the text before the first ``/`` whatever the split count (1 or more).
- cell_text._families ``c[0] == major`` -> ``c[0] is major``: both are ints of
  capability tuples, and ``family`` is empty unless ``major`` is a grid major (at most
  12), an int CPython caches, so equal values are the same object.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from accepts_trees import COMBINATION_SIGNATURE, one_checked_tree
from evaluator import HEADER, ask, cm, load
from runtime_trees import runtime_backend, runtime_tree
from treebuilder import CUDA, dedent, rows

from sphinxext_attn.analysis.pipeline import analyze
from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter, Unknown
from sphinxext_attn.pyeval.values import NODE
from sphinxext_attn.runtime.capability_points import (
    _pairs_of,
    named_capabilities,
    points,
    traced_functions,
)
from sphinxext_attn.runtime.priority_paths import _number_choices, explore, priority_function
from sphinxext_attn.runtime.priority_titles import evaluated_priorities
from sphinxext_attn.runtime.questions import Asker
from sphinxext_attn.source.tree import SourceTree

ENUM = "from vllm.v1.attention.backends.registry import AttentionBackendEnum as E\n\n\n"


def _priorities(root: Path, body: str) -> Interpreter:
    runtime_tree(root, {CUDA: ENUM + dedent(body)})
    return Interpreter(SourceTree(root), Machine())


@pytest.mark.parametrize(
    "constants", [[16], [0], [8, 11], [5, 6], [-3, 0, 2], [-10, -7, 1, 30], [8, 10]]
)
@pytest.mark.parametrize("optional", [False, True])
def test_each_number_tried_lies_in_the_region_it_stands_for(constants, optional):
    for choice in _number_choices(constants, optional):
        if choice.value is None:
            assert optional and choice.span is None
            continue
        low, high = choice.span
        assert low <= choice.value <= high, choice


def test_a_region_between_two_constants_is_tried_inside_it(tmp_path):
    """Heads 9 and 10 lie between the constants 8 and 11: the run for that region
    takes a size in it and returns its own list."""
    interp = _priorities(
        tmp_path,
        """
        def _get_backend_priorities(num_heads: int):
            if 8 < num_heads < 11:
                return [E.FLASHINFER]
            return [E.FLASH_ATTN]
        """,
    )
    found = {p.backends: p.conditions for p in evaluated_priorities(interp)}
    assert found == {("FLASHINFER",): "heads 9-10", ("FLASH_ATTN",): "heads ≤ 8 or ≥ 11"}


def _runs(root: Path, paths: int) -> Interpreter:
    """A function with ``paths`` paths: one int read once, compared with
    ``paths - 2`` adjacent constants (below them, each, above them)."""
    chain = " < ".join(map(str, range(paths - 2)))
    return _priorities(
        root,
        f"""
        def _get_backend_priorities(num_heads: int):
            if num_heads < {chain}:
                return [E.FLASHINFER]
            return [E.FLASH_ATTN]
        """,
    )


def test_the_exploration_runs_four_thousand_times_and_not_once_more(tmp_path):
    interp = _runs(tmp_path / "at", 4000)
    choices, paths = explore(interp, priority_function(interp))
    assert len(choices["num_heads"]) == len(paths) == 4000
    over = _runs(tmp_path / "over", 4001)
    with pytest.raises(Unknown, match="too many paths"):
        explore(over, priority_function(over))


def test_a_single_number_left_out_is_said_as_not_it(tmp_path):
    interp = _priorities(
        tmp_path,
        """
        def _get_backend_priorities(num_heads: int):
            if num_heads == 16:
                return [E.FLASHINFER]
            return [E.FLASH_ATTN]
        """,
    )
    found = {p.backends: p.conditions for p in evaluated_priorities(interp)}
    assert found == {("FLASHINFER",): "heads 16", ("FLASH_ATTN",): "heads not 16"}


def test_a_table_of_capabilities_is_read_for_its_first_64_pairs(tmp_path):
    """A module constant the check reads names capabilities; a longer one is a table
    of something else read no further than its 64th pair."""
    pairs = [(5 + i // 10, i % 10) for i in range(64)]
    header = HEADER + f"\n_CAPS = ({', '.join(map(str, pairs))}, (20, 9))\n"
    check = "supports_compute_capability"
    it, cls = load(
        tmp_path, cm(check, "return capability in _CAPS", args="capability"), header=header
    )
    ran = traced_functions(it, [(9, 0)], lambda cap: ask(it, cls, check, cap))
    assert named_capabilities(ran) == set(pairs)


def test_only_pairs_of_two_integers_are_capabilities():
    """A list ``[9, 0]`` or a pair holding a string is no capability (``and`` ->
    ``or`` read both)."""
    assert _pairs_of([[9, 0], (8, 0), (10, "x"), (7, 5, 0)]) == {(8, 0)}


def test_each_named_capability_brings_its_major_and_the_next_one():
    """9.0 named: 9.0 and 10.0 are asked (``major + 1`` -> ``major | 1`` gave 9.0
    again for an odd major)."""
    assert points([], {(9, 0)}) == [(9, 0), (10, 0)]
    assert points([(7, 5)], {(8, 6)}) == [(7, 5), (8, 0), (8, 6), (9, 0)]


MIXED = (
    """
from vllm.v1.attention.backend import AttentionBackend


class MixedBackend(AttentionBackend):
    @classmethod
    def supports_head_size(cls, head_size):
        return head_size % 64 == 0 or head_size == 80

    @staticmethod
    def get_supported_kernel_block_sizes():
        return [16, 64, 128]
"""
    + COMBINATION_SIGNATURE
    + """\
        if head_size == 80:
            return "head size 80 needs the newer kernel"
        if block_size is not None and block_size % 64 != 0:
            return "the kernel needs a block size divisible by 64"
        return None
"""
)


def test_a_column_of_rules_the_check_narrows_leaves_the_next_column_narrowed(tmp_path):
    """Head size 80 is refused, but the head sizes are a rule (%64) the refusal cannot
    be taken from: said so, and the block sizes after it are still narrowed."""
    module = "vllm/v1/attention/backends/mixed.py"
    row = rows(
        analyze(one_checked_tree(tmp_path, "MIXED_ATTN", module, "MixedBackend", MIXED)),
        "MIXED_ATTN",
    )[0]
    assert row.accepts["unknown"] == {"Head Sizes": "the full check refuses 80 of a set of rules"}
    assert row.accepts["block_sizes"] == ["64", "128"]
    assert row.block_sizes == ("64", "128")
    assert "also accepts 16" in row.notes["Block Sizes"]


def test_a_question_that_raises_on_some_gpus_is_answered_by_the_others(tmp_path):
    """The GPUs where the class raises are left out, the later ones still asked
    (``continue`` -> ``break`` stopped at the first GPU that raised)."""
    body = (
        "@classmethod\ndef supports_sink(cls):\n"
        "    if not current_platform.is_device_capability_family(100):\n"
        "        raise ValueError('not on this GPU')\n"
        "    return True\n"
    )
    runtime_backend(tmp_path, body, header="from vllm.platforms import current_platform\n")
    it = Interpreter(SourceTree(tmp_path), Machine())
    cls = it.module_attr(it.module("vllm.v1.attention.backends.my_attn"), "MyBackend", NODE)
    answer = Asker(it, cls).ask("supports_sink")
    assert answer.by_capability and answer.unknown is None
    assert answer.capabilities and {c[0] for c in answer.capabilities} == {10}
    assert answer.value == [True] * len(answer.capabilities)


def test_the_full_check_runs_up_to_its_limit_and_not_once_more(tmp_path, monkeypatch):
    """A class whose full check needs N runs is narrowed with MAX_RUNS = N and not
    with N - 1 (``runs += 1`` -> ``+= 2`` gave up at half)."""
    from sphinxext_attn.runtime import full_check

    module = "vllm/v1/attention/backends/mixed.py"
    root = one_checked_tree(tmp_path, "MIXED_ATTN", module, "MixedBackend", MIXED)
    counted: list[int] = []
    original = full_check.FullCheck.run

    def counting(self, config, record=False):  # type: ignore[no-untyped-def]
        if self.cls.name == "MixedBackend":
            counted.append(1)
        return original(self, config, record)

    monkeypatch.setattr(full_check.FullCheck, "run", counting)
    whole = rows(analyze(root), "MIXED_ATTN")[0]
    needed = len(counted)
    assert whole.accepts["block_sizes"] == ["64", "128"] and needed > 2
    monkeypatch.setattr(full_check, "MAX_RUNS", needed)
    assert rows(analyze(root), "MIXED_ATTN")[0].accepts == whole.accepts
    monkeypatch.setattr(full_check, "MAX_RUNS", needed - 1)
    assert rows(analyze(root), "MIXED_ATTN")[0].accepts != whole.accepts


def test_some_gpus_of_a_major_are_named_one_by_one():
    """Only the whole of a major is ``sm80``; a part of it that does not start at its
    first GPU is named by its members (``==`` -> ``>=`` compared the lists' order)."""
    from sphinxext_attn.runtime.priority_titles import _arch_name

    everyone = [(7, 5), (8, 0), (8, 6), (8, 7), (8, 9), (9, 0)]
    assert _arch_name([(8, 0), (8, 6), (8, 7), (8, 9)], everyone, False) == "sm80"
    assert _arch_name([(8, 6), (8, 9)], everyone, False) == "sm86+sm89"
    assert _arch_name([(8, 0), (8, 6)], everyone, False) == "sm80+sm86"


def test_only_a_major_compared_with_a_number_names_that_major():
    """``capability.major >= 9`` names 9.0; ``capability.minor >= 5`` names no GPU
    (``attr == "major"`` -> ``>=`` took "minor", which sorts after it)."""
    from sphinxext_attn.runtime.capability_points import _from_compare

    def named(text: str) -> set[tuple[int, int]]:
        node = ast.parse(text, mode="eval").body
        assert isinstance(node, ast.Compare)
        return _from_compare(node)

    assert named("capability.major >= 9") == {(9, 0)}
    assert named("capability.minor >= 5") == set()


def test_a_pair_with_a_minor_below_nine_is_a_capability():
    """``cap in ((8, 6), (9, 0), (7, 12))``: each literal pair whose minor is a digit
    (``0 <= minor <= 9`` -> ``== 9`` kept only x.9)."""
    from sphinxext_attn.runtime.capability_points import _from_compare

    node = ast.parse("cap in ((8, 6), (8, 9), (7, 12))", mode="eval").body
    assert isinstance(node, ast.Compare)
    assert _from_compare(node) == {(8, 6), (8, 9)}
