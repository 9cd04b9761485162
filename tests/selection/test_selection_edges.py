"""Edges of the selection code a sampled mutation run found unpinned, each test
failing with the mutant it was written for.

Mutants argued equivalent (no input tells it from the product):
- platform_lists._titled ``range(3)`` -> ``range(4)`` (and, in sample 59, ``range(2)``)
  widening rounds: a round is a function of the conditions alone and the first round
  already reaches its fixed point (test_one_widening_round_reaches_the_fixed_point),
  so later rounds change nothing. The code now widens once.
- platform_rules ``zip(literal.keys, literal.values, strict=True)`` -> ``strict=False``:
  an ``ast.Dict`` always has as many keys as values (a ``**x`` entry's key is None).
- platform_lists._words ``chosen[0]`` -> ``chosen[-1]`` for a flag: a flag has two values
  and a condition that restricts it allows one of them, so ``chosen`` holds one value.
- reason_sources._literals sentinel ``1 << 30`` -> ``2 << 30``: both exceed any line
  number; a string literal on line 2**30 needs a file of over a billion lines.
- platform_rules._assigns_request ``t.id == REQUESTED`` -> ``is``: identifiers from
  ``ast.parse`` are interned, as is the literal constant, so equal names are one object.
- platform_lists ``len(tree.derived) > MAX_SELECTORS`` -> ``>=``: a capacity bound of a
  cache of selectors; clearing it one entry earlier rebuilds a selector, same answers.
- answers.read_valid_backends ``items[0].unknown`` -> ``items[-1]``: taken only when
  ``len(items) == 1``.
- requested.kinds ``use_mla: False`` -> ``True`` in the call reading the kind enum: the
  kinds are the values of the enum the returned member belongs to, and every layer's
  kind (MLA or not) is a member of that one enum (``get_attn_spec_kind`` of 0.34).
"""

from __future__ import annotations

import ast
import itertools
import random
import shutil
from typing import NamedTuple

import pytest
from runtime_trees import runtime_tree
from treebuilder import DEMO_TREE

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.environment import environment_from
from sphinxext_attn.model.platform import PlatformSelection, Rule
from sphinxext_attn.model.records import Location
from sphinxext_attn.model.selection import Decision
from sphinxext_attn.pyeval import Interpreter, Unknown
from sphinxext_attn.selection.answers import read_valid_backends
from sphinxext_attn.selection.inputs import check_case
from sphinxext_attn.selection.option_fields import MAX_HOPS, ConfigReader
from sphinxext_attn.selection.platform_lists import Run, _factored, _merge, _titled, _widened
from sphinxext_attn.selection.platform_rules import _requested, backend_of_path, read_rules
from sphinxext_attn.selection.plugin_rows import reached_entries
from sphinxext_attn.selection.requested import _refused, _settle_hint
from sphinxext_attn.selection.settled import _conditional, conditional
from sphinxext_attn.source.registry import RegistryEntry
from sphinxext_attn.source.tree import SourceTree


def test_a_join_of_no_answers_selects_nothing():
    """No answer to join (no value of the fact was asked): no candidate, no pick."""
    joined = conditional("installed.aiter", [])
    assert joined.selected is None and joined.candidates == []


def test_one_widening_round_reaches_the_fixed_point():
    """The lists' conditions, widened and merged once, stay as they are when widened
    and merged again (point sets over 2-5 facts of 2-3 values)."""
    rng = random.Random(49)
    for _ in range(150):
        sizes = [rng.randint(2, 3) for _ in range(rng.randint(2, 5))]
        names = [f"f{i}" for i in range(len(sizes))]
        every = list(itertools.product(*(range(n) for n in sizes)))
        share = rng.choice((0.3, 0.5, 0.7))
        mine = {p for p in every if rng.random() < share} or {every[0]}
        start = [{n: frozenset({p[i]}) for i, n in enumerate(names)} for p in sorted(mine)]
        once = _merge(_widened(_merge(start), mine, names))
        assert _merge(_widened([dict(c) for c in once], mine, names)) == once


class _Member(NamedTuple):
    name: str


def test_a_backend_rejected_with_no_reason_is_read_as_rejected():
    """An empty list of reasons is still a rejection, not an answer of unknown shape."""
    backend = _Member("FLASH_ATTN")
    decision = read_valid_backends(([], {backend: (0, [])}), "x.py:1")
    assert decision.rejected == {"FLASH_ATTN": []} and decision.unknown == {}


def test_a_refusal_whose_reasons_are_all_not_evaluated_is_open_on_the_first():
    message = "ValueError: no: ['not evaluated: first', 'not evaluated: second']"
    decision = _refused("MY_ATTN", message, [])
    assert decision.unknown == {"MY_ATTN": "not evaluated: first"}
    assert [c["backend"] for c in decision.candidates] == ["MY_ATTN", "none"]


def test_a_refusal_without_a_message_is_open_on_the_first_check_skipped():
    assert _refused("MY_ATTN", "ValueError", ["first", "second"]).unknown == {"MY_ATTN": "first"}
    assert _refused("MY_ATTN", "ValueError: ", []).unknown == {
        "MY_ATTN": "the refusal's message was not evaluated"
    }


def test_a_refusal_keeps_its_evaluated_reasons_and_names_the_skipped_checks():
    message = "ValueError: MY_ATTN refused: ['head size 80', 'not evaluated: a check']"
    decision = _refused("MY_ATTN", message, ["a check skipped"])
    assert decision.selected is None and not decision.unknown
    assert decision.refused == "ValueError: MY_ATTN refused: ['head size 80']"
    assert decision.rejected == {"MY_ATTN": ["head size 80"]}
    assert decision.unknown_reasons == ["a check skipped"]
    plain = _refused("MY_ATTN", "ValueError: MY_ATTN refused: ['head size 80']", [])
    assert plain.refused.endswith("['head size 80']") and plain.unknown_reasons == []
    listless = _refused("MY_ATTN", "ValueError: MY_ATTN is not for this GPU", ["skipped"])
    assert listless.refused == "ValueError: MY_ATTN is not for this GPU"
    assert not listless.unknown and listless.rejected == {}


def test_a_skipped_check_names_the_fact_that_settles_it():
    unknown = Unknown("is_aiter_found() not evaluated")
    assert _settle_hint(unknown) == "is_aiter_found() not evaluated"
    unknown.assumable = "installed.aiter"
    assert _settle_hint(unknown) == (
        "is_aiter_found() not evaluated; settle it with --assume installed.aiter=true|false"
    )


def test_an_unknown_key_of_a_case_is_named_with_the_keys_there_are():
    named = r"case 3: unknown key 'bogus'; the keys are config, "
    with pytest.raises(ValueError, match=named) as e:
        check_case(3, {"config": {}, "bogus": 1})
    assert str(e.value).endswith(": a recorded answer, ignored)")
    with pytest.raises(ValueError, match=r"case 0: config: unknown key 'nope'; the keys are "):
        check_case(0, {"config": {"nope": 1}})


def test_a_recorded_answer_is_read_past_and_the_keys_after_it_still_checked():
    """``selected`` (a recorded answer) before an unknown key: the key is still named
    (``continue`` -> ``break`` stopped at the recorded answer)."""
    with pytest.raises(ValueError, match=r"case 1: unknown key 'bogus'"):
        check_case(1, {"selected": "FLASH_ATTN", "bogus": 1, "config": {}})
    with pytest.raises(ValueError, match=r"case 2: num_heads: "):
        check_case(2, {"priorities": [], "num_heads": 0})


@pytest.mark.parametrize(
    ("test", "settled"),
    [
        ("selected_backend in (E.FLASH_ATTN, E.TRITON_ATTN)", False),
        ("selected_backend in ('FLASH_ATTN',)", False),
        ("selected_backend not in ['FLASH_ATTN']", True),
        ("selected_backend in (None, E.FLASH_ATTN)", True),
        ("selected_backend == None", True),
        ("selected_backend != 'FLASH_ATTN'", True),
    ],
)
def test_a_request_compared_with_a_tuple_is_none_only_when_it_holds_none(test, settled):
    """With no backend requested, ``selected_backend in (...)`` holds only when the
    tuple holds None (``and`` -> ``or`` took any tuple, or any constant, as None)."""
    node = ast.parse(test, mode="eval").body
    assert _requested(node) is settled


def test_conditions_share_a_restriction_only_when_each_has_it_alike():
    dims = {"VLLM_A": ["unset", "1", "0"], "VLLM_B": ["unset", "1", "0"]}
    conditions = [
        {"VLLM_A": frozenset({0, 1}), "VLLM_B": frozenset({0})},
        {"VLLM_A": frozenset({0}), "VLLM_B": frozenset({1})},
    ]
    assert _factored(conditions, dims) == (
        "(VLLM_A=unset|1, VLLM_B=unset) or (VLLM_A=unset, VLLM_B=1)"
    )
    conditions[1]["VLLM_A"] = frozenset({0, 1})
    assert _factored(conditions, dims) == "VLLM_A=unset|1, and VLLM_B=unset or VLLM_B=1"


MINE = """
class Mine:
    @staticmethod
    def get_name():
        return "MINE"


class Broken:
    @staticmethod
    def get_name():
        raise NotImplementedError


class Blank:
    @staticmethod
    def get_name():
        return ""


class Numbered:
    @staticmethod
    def get_name():
        return 5
"""


def test_a_class_outside_the_registry_is_named_by_get_name_else_by_its_class(tmp_path):
    root = runtime_tree(tmp_path, {"vllm/mine.py": MINE})
    interp = Interpreter(SourceTree(root))
    assert backend_of_path(interp, "vllm.mine.Mine") == "MINE"
    assert backend_of_path(interp, "vllm.mine.Broken") == "Broken"
    # a name only if it is a non-empty string (``and`` -> ``or`` took either)
    assert backend_of_path(interp, "vllm.mine.Blank") == "Blank"
    assert backend_of_path(interp, "vllm.mine.Numbered") == "Numbered"


@pytest.mark.parametrize(
    ("annotation", "good", "bad"),
    [
        ("Optional[int]", ["3", "None"], ["'x'"]),
        ("Union[int, str]", ["3", "'x'"], ["None"]),
        ("typing.Optional[bool]", ["True", "None"], ["'x'"]),
    ],
)
def test_an_optional_or_union_field_takes_each_of_its_types(tmp_path, annotation, good, bad):
    """Every member of ``Optional[...]`` / ``Union[...]`` is a type the option takes
    (``for item in items`` -> ``for item in []`` kept only None)."""
    reader = ConfigReader(SourceTree(tmp_path))
    node = ast.parse(annotation, mode="eval").body
    kind = reader.field_type("vllm/config/x.py", node)
    assert [text for text in good if not kind.accepts(text)] == []
    assert [text for text in bad if kind.accepts(text)] == []


def test_an_import_chain_is_followed_up_to_the_hop_limit(tmp_path):
    """A name imported through MAX_HOPS modules is found; one more hop is too many."""
    for extra in (0, 1):
        root = tmp_path / str(extra)
        (root / "vllm").mkdir(parents=True)
        (root / "vllm" / "__init__.py").write_text("")
        last = MAX_HOPS + extra
        for i in range(last):
            (root / "vllm" / f"m{i}.py").write_text(f"from vllm.m{i + 1} import Field\n")
        (root / "vllm" / f"m{last}.py").write_text("class Field:\n    pass\n")
        found = ConfigReader(SourceTree(root)).binding("vllm.m0", "Field")
        if extra:
            assert found is None
        else:
            assert found is not None and found[0] == f"vllm/m{last}.py"
            assert isinstance(found[1], ast.ClassDef)


def test_a_class_inheriting_from_itself_ends_at_the_hop_limit(tmp_path):
    """Bases that lead back to the class (a broken tree) are followed MAX_HOPS times,
    then the field is "maybe there" (True), not a recursion without end."""
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "__init__.py").write_text("")
    (tmp_path / "vllm" / "c.py").write_text("class A(B):\n    pass\n\nclass B(A):\n    pass\n")
    reader = ConfigReader(SourceTree(tmp_path))
    found = reader.binding("vllm.c", "A")
    assert found is not None and isinstance(found[1], ast.ClassDef)
    assert reader.field_annotation(("vllm/c.py", found[1]), "missing") is True


def test_twelve_fields_are_listed_whole_and_more_are_cut(tmp_path):
    from sphinxext_attn.selection.option_fields import _field_list

    reader = ConfigReader(SourceTree(tmp_path))
    for count, tail in ((12, "f11"), (13, "f11, ...")):
        body = "".join(f"    f{i}: int = {i}\n" for i in range(count))
        node = ast.parse(f"class C:\n{body}").body[0]
        assert isinstance(node, ast.ClassDef)
        shown = _field_list(reader, ("x.py", node))
        assert shown.startswith("its fields: f0, f1, ") and shown.endswith(tail)


def test_a_request_check_that_cannot_be_evaluated_stays_a_condition(tmp_path):
    """A platform function asked about the request whose answer is not evaluated
    (it calls outside the tree) leaves its test as a condition of the rule."""
    root = tmp_path / "tree"
    shutil.copytree(DEMO_TREE, root)
    xpu = root / "vllm" / "platforms" / "xpu.py"
    text = xpu.read_text(encoding="utf-8")
    first = "        if attn_selector_config.use_sparse:"
    text = text.replace(
        first, "        if outside_ok(selected_backend):\n            return 'x.y.Z'\n" + first, 1
    )
    text = text.replace(
        "\n\nclass XPUPlatform",
        "\nimport outside_pkg\n\n\ndef outside_ok(backend):\n"
        "    return outside_pkg.check(backend)\n\n\nclass XPUPlatform",
        1,
    )
    xpu.write_text(text, encoding="utf-8")
    interp = Interpreter(SourceTree(root), Machine(environment_from(platform="xpu")))
    rules, _ = read_rules(interp, "xpu")
    assert rules[0].conditions == ("outside_ok(selected_backend)",)
    assert [r.outcome for r in rules[1:]][-1] == "FLASH_ATTN"


def test_a_condition_another_covers_is_dropped_even_when_they_share_a_value():
    """(a=0, b=0, c=0) lies inside (a=0|1, b=0|1, c=0): only the wider is kept, though
    both allow the same c (neither can be widened: (2, 0, 0), (0, 2, 0) and (0, 0, 1)
    are no points of the list)."""
    names = ["a", "b", "c"]
    mine = {(0, 0, 0), (0, 1, 0), (1, 0, 0), (1, 1, 0), (2, 2, 1)}
    small = {"a": frozenset({0}), "b": frozenset({0}), "c": frozenset({0})}
    wide = {"a": frozenset({0, 1}), "b": frozenset({0, 1}), "c": frozenset({0})}
    assert _widened([small, wide], mine, names) == [wide]


def test_an_optional_nested_past_the_hop_limit_takes_anything(tmp_path):
    """Each ``Optional[...]`` / ``Union[...]`` is a hop: a type MAX_HOPS deep is read,
    one deeper is too deep to read and takes any text (``hops + 1`` -> ``hops * 1``
    never counted them)."""
    reader = ConfigReader(SourceTree(tmp_path))
    for depth, takes_text in ((MAX_HOPS, False), (MAX_HOPS + 1, True)):
        annotation = "Optional[" * depth + "int" + "]" * depth
        kind = reader.field_type("vllm/config/x.py", ast.parse(annotation, mode="eval").body)
        assert kind.accepts("3") and kind.accepts("None")
        assert kind.accepts("'x'") is takes_text, depth


@pytest.mark.parametrize(
    ("opening", "closing"),
    [("Union[None, ", "]"), ("Annotated[", ", 'doc']"), ("(None | ", ")")],
)
def test_every_nesting_of_a_type_is_a_hop(tmp_path, opening, closing):
    """``Union``, ``Annotated`` and ``|`` each count a hop, as ``Optional`` does
    (``hops + 1`` -> ``hops ** 1`` or ``hops >> 1`` never reached the limit)."""
    reader = ConfigReader(SourceTree(tmp_path))
    for depth, takes_text in ((MAX_HOPS, False), (MAX_HOPS + 1, True)):
        annotation = opening * depth + "int" + closing * depth
        kind = reader.field_type("vllm/config/x.py", ast.parse(annotation, mode="eval").body)
        assert kind.accepts("3")
        assert kind.accepts("'x'") is takes_text, (annotation, depth)


def test_a_chain_of_type_aliases_is_a_hop_each(tmp_path):
    """``A0 = A1``, ``A1 = A2`` ... ``An = int``: each alias read is a hop; a chain
    longer than MAX_HOPS takes any text (``hops + 1`` -> ``hops - 1`` never ended one
    that loops: ``B = C``, ``C = B``)."""
    reader = ConfigReader(SourceTree(tmp_path))
    config = tmp_path / "vllm" / "config"
    config.mkdir(parents=True)
    for depth, takes_text in ((MAX_HOPS - 1, False), (MAX_HOPS + 1, True)):
        lines = [f"A{i} = A{i + 1}" for i in range(depth)] + [f"A{depth} = int"]
        (config / f"d{depth}.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
        reader = ConfigReader(SourceTree(tmp_path))
        kind = reader.field_type(f"vllm/config/d{depth}.py", ast.parse("A0", mode="eval").body)
        assert kind.accepts("3")
        assert kind.accepts("'x'") is takes_text, depth
    (config / "loop.py").write_text("B = C\nC = B\n", encoding="utf-8")
    reader = ConfigReader(SourceTree(tmp_path))
    kind = reader.field_type("vllm/config/loop.py", ast.parse("B", mode="eval").body)
    assert kind.any


def test_a_rules_class_replaces_only_the_classless_entry_of_its_own_name():
    """A name the registry holds with no class (a placeholder, or a plugin's
    ``register_backend(NAME, "")``) gives way to the class a rule names for it by path;
    a classless entry of another name stays (``==`` -> ``>=`` dropped every name
    sorting after the rule's)."""
    where = Location("vllm/v1/attention/backends/registry.py", 1)
    registry = [RegistryEntry("FLASH_ATTN", "", where), RegistryEntry("CUSTOM", "", where)]
    rules = [Rule(("use_mla",), "CUSTOM", 3, "plug.attn.MyBackend"), Rule((), "FLASH_ATTN", 5)]
    selection = PlatformSelection("xpu", rules=rules, source="vllm/platforms/xpu.py")
    got = reached_entries(Interpreter(SourceTree(DEMO_TREE)), selection, registry)
    assert [(e.name, e.class_path) for e in got] == [
        ("FLASH_ATTN", ""),
        ("CUSTOM", "plug.attn.MyBackend"),
    ]
    assert got[1].location == Location("vllm/platforms/xpu.py", 3)


def test_a_branch_for_a_requested_backend_adds_no_rule_when_none_is_requested(tmp_path):
    """The rules are read with no backend requested: ``if selected_backend is not
    None:`` is then false, its return no rule, and the rules stay the demo's own
    (``value is None`` -> ``is not None`` read the branch as always taken)."""
    root = tmp_path / "tree"
    shutil.copytree(DEMO_TREE, root)
    xpu = root / "vllm" / "platforms" / "xpu.py"
    first = "        if attn_selector_config.use_sparse:"
    text = xpu.read_text(encoding="utf-8")
    branch = "        if selected_backend is not None:\n            return 'x.y.Z'\n"
    xpu.write_text(text.replace(first, branch + first, 1), encoding="utf-8")
    machine = Machine(environment_from(platform="xpu"))
    rules, _ = read_rules(Interpreter(SourceTree(root), machine), "xpu")
    demo, _ = read_rules(Interpreter(SourceTree(DEMO_TREE), machine), "xpu")
    assert [(r.conditions, r.outcome) for r in rules] == [(r.conditions, r.outcome) for r in demo]
    assert rules and all(r.outcome != "Z" for r in rules)  # x.y.Z is named Z


def test_sparse_and_dense_mla_lists_are_titled_by_the_sparse_flag():
    """``use_mla`` is the category, not a condition; every other layer fact, here
    ``use_sparse`` (sorting after it), titles the lists it tells apart (``==`` ->
    ``>=`` dropped it and left both lists untitled)."""

    def run(sparse: bool, backends: tuple[str, ...]) -> Run:
        layer = (("kv_cache_dtype", "auto"), ("use_mla", True), ("use_sparse", sparse))
        return Run("gfx942", (), layer, backends)

    runs = [run(False, ("TRITON_MLA",)), run(True, ("ROCM_AITER_MLA_SPARSE",))]
    assert _titled(runs) == [
        (("TRITON_MLA",), "dense"),
        (("ROCM_AITER_MLA_SPARSE",), "sparse"),
    ]


def test_a_conditional_decision_widens_only_the_fact_it_is_conditional_on():
    """Joined over aiter installed or not, the decision rests on
    ``installed.aiter=true|false``; the other facts each answer read stay as read
    (``== name`` -> ``not ... == name`` widened every other fact instead)."""
    read = ["VLLM_ROCM_USE_AITER=1"]
    answers = [
        (value, Decision(pick, [pick], assumptions=[f"installed.aiter={value}", *read]))
        for value, pick in (("true", "ROCM_AITER_FA"), ("false", "TRITON_ATTN"))
    ]
    joined = _conditional("installed.aiter", answers)
    assert joined.assumptions == ["installed.aiter=true|false", "VLLM_ROCM_USE_AITER=1"]
    assert [c["backend"] for c in joined.candidates] == ["ROCM_AITER_FA", "TRITON_ATTN"]
