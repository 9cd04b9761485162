"""Engine options checked against a config's annotations of every shape the
reading knows (selection/option_fields.py): a quoted annotation, ``Annotated``,
a type alias, an enum, a base class declared elsewhere or not readable, and the
shapes it does not model (any value taken rather than a good one refused)."""

from __future__ import annotations

import pytest
from treebuilder import build_tree, dedent

from sphinxext_attn.model.environment import MODEL_ATTN_TYPE
from sphinxext_attn.selection.option_fields import OptionError, check_options
from sphinxext_attn.source.tree import SourceTree

CONFIG = """
from abc import ABC
from enum import Enum
from typing import Annotated, Literal, TypeAlias

from vllm.config.base import Base

Mode = Literal["a", "b"]
Pending: TypeAlias


class Color(Enum):
    RED = 1
    BLUE = 2


def helper():
    return 1


class Plain(object, ABC, Base):
    own: int


class Opaque(Unread):
    pass


class Empty(Base):
    pass


class VllmConfig:
    quoted: "int"
    broken: "int |"
    weird: Literal[1, foo]
    annotated: Annotated[int, "meta"]
    table: dict[str, int]
    nowhere: NoSuchType
    function: helper
    dotted: typing.Any
    mode: Mode
    color: Color
    pending: Pending
    plain: Plain
    opaque: Opaque
    empty: Empty
"""
BASE = "class Base:\n    inherited: bool\n"


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("tree")
    build_tree(root, {"vllm/config/__init__.py": dedent(CONFIG), "vllm/config/base.py": BASE})
    return str(root)


@pytest.mark.parametrize(
    "option",
    [
        "quoted=3",
        "annotated=3",
        "mode=a",
        "color=RED",
        "plain.own=2",
        "plain.inherited=true",
        "empty.inherited=false",
        # shapes the reading does not model take any value
        "broken=x",
        "weird=x",
        "table=x",
        "nowhere=x",
        "function=x",
        "dotted=x",
        "pending=x",
        # a base class it cannot read may declare the field
        "opaque.anything=x",
    ],
)
def test_an_option_the_annotation_allows_is_taken(root, option):
    name, _, text = option.partition("=")
    check_options(root, {name: text})


@pytest.mark.parametrize(
    ("option", "words"),
    [
        ("quoted=x", "'x' is not a value of quoted; it accepts an integer"),
        ("annotated=x", "it accepts an integer"),
        ("mode=c", "'c' is not a value of mode; it accepts 'a', 'b'"),
        ("color=GREEN", "it accepts RED, BLUE"),
        ("plain.own=x", "it accepts an integer"),
        ("plain.inherited=x", "'x' is not a value of plain.inherited; it accepts true or false"),
        ("plain.missing=1", "Plain has no field 'missing' (its fields: own)"),
        ("empty.missing=1", "Empty has no field 'missing' (it declares no fields)"),
    ],
)
def test_an_option_the_annotation_refuses_is_named(root, option, words):
    name, _, text = option.partition("=")
    with pytest.raises(OptionError) as caught:
        check_options(root, {name: text})
    assert str(caught.value).startswith(f"--option {name}={text}: ")
    assert words in str(caught.value), str(caught.value)


def test_no_options_and_the_analysis_own_options_need_no_config(tmp_path):
    check_options(str(tmp_path), {})
    check_options(str(tmp_path), {MODEL_ATTN_TYPE: "decoder"})
    with pytest.raises(OptionError, match="--option a.b=1: this tree has no VllmConfig"):
        check_options(str(tmp_path), {MODEL_ATTN_TYPE: "decoder", "a.b": "1"})


def test_the_build_tree_is_read_when_given(root, tmp_path):
    """``tree``: the build's parsed files are read, not ``root`` again."""
    with pytest.raises(OptionError, match="'c' is not a value of mode"):
        check_options(str(tmp_path), {"mode": "c"}, tree=SourceTree(root))
