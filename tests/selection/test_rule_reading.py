"""How a platform's ordered ``get_attn_backend_cls`` is read as rules
(selection/platform_rules.py): branches the request settles, an ``if``/``else``
that ends every path, what a ``raise`` says, a table of backends indexed by
flags, and a name set to a backend before it is returned."""

from __future__ import annotations

import ast
from collections.abc import Callable

import pytest
from treebuilder import DEMO_TREE, edited_demo_tree, replace_once

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.environment import environment_from
from sphinxext_attn.pyeval import Interpreter, Unknown
from sphinxext_attn.selection.platform_rules import (
    _keyed_table,
    _outcome,
    _raised,
    _requested,
    read_rules,
)
from sphinxext_attn.source.tree import SourceTree

XPU = "vllm/platforms/xpu.py"


def _xpu_edited(tmp_path, edit: Callable[[str], str]) -> Interpreter:  # type: ignore[no-untyped-def]
    """An interpreter of the demo tree, its XPU platform file edited, on XPU."""
    root = edited_demo_tree(tmp_path, XPU, edit)
    return Interpreter(SourceTree(root), Machine(environment_from(platform="xpu")))


def _xpu_method(tmp_path, method: str) -> Interpreter:  # type: ignore[no-untyped-def]
    """:func:`_xpu_edited` with ``get_attn_backend_cls`` (XPU's last method) made ``method``."""

    def edit(text: str) -> str:
        start = text.index("    @classmethod\n    def get_attn_backend_cls")
        return text[:start] + method.lstrip("\n")

    return _xpu_edited(tmp_path, edit)


METHOD = """
    @classmethod
    def get_attn_backend_cls(cls, selected_backend, attn_selector_config, num_heads=None) -> str:
        if selected_backend is not None:
            asked = True
        if selected_backend is None:
            if attn_selector_config.use_sparse:
                raise NotImplementedError(f"no sparse on {cls.name}")
        if attn_selector_config.use_mm_prefix:
            return AttentionBackendEnum.FLEX_ATTENTION.get_path()
        else:
            prefix = False
        if attn_selector_config.use_mla:
            return AttentionBackendEnum.TRITON_MLA.get_path()
        else:
            return AttentionBackendEnum.FLASH_ATTN.get_path()
        return AttentionBackendEnum.TRITON_ATTN.get_path()
"""


def test_settled_branches_and_an_if_else_that_ends_every_path(tmp_path):
    """The branch only a request takes adds nothing and the walk goes on; the one
    with no request is read without a condition; an ``if``/``else`` of which one
    branch returns is walked past; after one whose branches both return, nothing
    is reached."""
    interp = _xpu_method(tmp_path, METHOD)
    rules, where = read_rules(interp, "xpu")
    assert where == XPU
    assert [(r.conditions, r.outcome) for r in rules] == [
        (("use_sparse",), "raises NotImplementedError: no sparse on {cls.name}"),
        (("use_mm_prefix",), "FLEX_ATTENTION"),
        (("use_mla",), "TRITON_MLA"),
        (("not (use_mla)",), "FLASH_ATTN"),
    ]


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("ValueError", "raises ValueError"),
        ("ValueError()", "raises ValueError"),
        ("errors.Refused(message)", "raises errors.Refused"),
        ("ValueError('no such backend')", "raises ValueError: no such backend"),
        ("ValueError(f'{name} is {n:d} too big')", "raises ValueError: {name} is {n} too big"),
    ],
)
def test_a_raise_is_said_with_its_literal_message(source, said):
    assert _raised(ast.parse(source, mode="eval").body) == said


def _expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def test_a_table_of_backends_is_read_only_with_constant_keys_of_the_index_shape():
    value = _expr("table[(config.use_mla, config.use_sparse)]")
    good = {"table": _expr("{(True, False): 'a.A', (False, False): 'b.B'}")}
    found = _keyed_table(value, good)
    assert found is not None
    assert [(c, ast.unparse(v)) for c, v in found] == [
        ("config.use_mla == True and config.use_sparse == False", "'a.A'"),
        ("config.use_mla == False and config.use_sparse == False", "'b.B'"),
    ]
    assert _keyed_table(value, {"table": _expr("make_table()")}) is None
    assert _keyed_table(value, {"table": _expr("{(True,): 'a.A'}")}) is None
    assert _keyed_table(value, {"table": _expr("{(True, flag): 'a.A'}")}) is None
    assert _keyed_table(_expr("table.get(1)"), good) is None
    assert _keyed_table(_expr("config[1]"), good) is None


def test_a_backend_is_named_through_a_name_set_to_it():
    interp = Interpreter(SourceTree(DEMO_TREE))
    assert _outcome(interp, _expr("E.TRITON_MLA.get_path()")) == "TRITON_MLA"
    chosen = {"backend": "(AttentionBackendEnum.FLASH_ATTN)"}
    assert _outcome(interp, _expr("backend.get_path()"), chosen) == "FLASH_ATTN"
    assert _outcome(interp, _expr("backend.get_path()"), {"backend": "pick(x)"}) == (
        "backend.get_path()"
    )
    assert _outcome(interp, _expr("backend.get_name()"), chosen) == "backend.get_name()"
    assert _outcome(interp, _expr("choose()")) == "choose()"


def test_a_condition_of_request_checks_alone_is_settled():
    """Every part settled and none deciding: an ``and`` holds, an ``or`` does not."""
    both = _expr("selected_backend is None and selected_backend is None")
    assert _requested(both) is True
    neither = _expr("selected_backend is not None or selected_backend")
    assert _requested(neither) is False
    mixed = _expr("selected_backend is None and use_mla")
    assert ast.unparse(_requested(mixed)) == "use_mla"  # type: ignore[arg-type]


def _xpu(tmp_path, old: str, new: str) -> Interpreter:  # type: ignore[no-untyped-def]
    return _xpu_edited(tmp_path, replace_once(old, new))


def test_a_request_check_the_module_does_not_define_stays_a_condition(tmp_path):
    """``is_special(selected_backend)`` with no ``is_special`` in the platform's
    module cannot be asked: the branch is a rule under that condition, not dropped."""
    first = "        if attn_selector_config.use_sparse:"
    branch = (
        "        if is_special(selected_backend):\n"
        "            return AttentionBackendEnum.FLEX_ATTENTION.get_path()\n"
    )
    rules, _ = read_rules(_xpu(tmp_path, first, branch + first), "xpu")
    assert (rules[0].conditions, rules[0].outcome) == (
        ("is_special(selected_backend)",),
        "FLEX_ATTENTION",
    )
    assert len(rules) == 5


def test_a_platform_without_its_own_rules_method_is_unknown(tmp_path):
    interp = _xpu(tmp_path, "def get_attn_backend_cls", "def get_backend_cls")
    with pytest.raises(Unknown, match="^XPUPlatform has no get_attn_backend_cls of its own"):
        read_rules(interp, "xpu")


TABLES = """
    @classmethod
    def get_attn_backend_cls(cls, selected_backend, attn_selector_config, num_heads=None) -> str:
        table = {(True,): "vllm.a.A", (False,): "vllm.b.B"}
        if attn_selector_config.use_sparse:
            return table[(attn_selector_config.use_mla,)]
        else:
            return table[(attn_selector_config.use_mla,)]
        return AttentionBackendEnum.TRITON_ATTN.get_path()
"""


def test_an_if_else_whose_branches_return_tables_ends_every_path(tmp_path):
    """A table returned in each branch ends the walk there (with its KeyError rule):
    the ``return`` after the ``if``/``else`` is never reached, so it is no rule."""
    interp = _xpu_method(tmp_path, TABLES)
    rules, _ = read_rules(interp, "xpu")
    outcomes = [r.outcome for r in rules]
    assert len(rules) == 6 and "TRITON_ATTN" not in outcomes, outcomes
    assert [r.conditions[-1] for r in rules if r.outcome.startswith("raises KeyError")] == [
        "any other key",
        "any other key",
    ]
