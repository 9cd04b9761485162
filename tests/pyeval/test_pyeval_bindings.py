"""The safe evaluator on names that code not evaluated may rebind: a loop, ``del``,
``match``, ``:=`` or ``with`` in a class body, a module-level loop, and a walrus
binding where Python binds it; the name is unknown, never its stale value."""

from __future__ import annotations

import pytest
from evaluator import HEADER, MODULE, ask, cm, load

from sphinxext_attn.pyeval import Unknown


@pytest.mark.parametrize(
    "binding",
    [
        "for size in (64, 256):\n    pass\n",
        "del size\n",
        "match 1:\n    case 1:\n        size = 256\n",
        "_x = (size := 256)\n",
        "with open('f') as size:\n    pass\n",
        "while False:\n    size = 1\n",
    ],
)
def test_class_body_bindings_not_evaluated_are_unknown_never_stale(tmp_path, binding):
    """A name a loop, ``del``, ``match``, ``:=`` or ``with ... as`` may rebind is
    unknown there, not the value an earlier line gave; other names are unaffected."""
    body = "size = 128\nother = 1\n" + binding + "\n" + cm("f", "return cls.size")
    body += cm("g", "return cls.other")
    it, cls = load(tmp_path, body)
    with pytest.raises(Unknown):
        ask(it, cls, "f")
    assert ask(it, cls, "g") == 1


#: a class larger than LAZY_CHARS (source/chunks.py) with a ``:=`` in a method
BIG_CLASS = (
    "class Big:\n    def g(self):\n        if (LIMIT := 3):\n            return LIMIT\n"
    + "".join(f"    def m{i}(self):\n        return {i}\n" for i in range(300))
    + "\n"
)


@pytest.mark.parametrize(
    ("header", "want"),
    [
        # a ``:=`` in a lambda binds in the lambda: the module's LIMIT stays 128
        ("LIMIT = 128\nHOOKS = {'a': lambda: (LIMIT := 256) > 0}\n", 128),
        # one in a comprehension binds in the module (as in CPython): unknown
        ("LIMIT = 128\nFOUND = [(LIMIT := x) for x in (256,)]\n", Unknown),
        # a method's binds in the method; a class-level one in the class
        (f"LIMIT = 128\n{BIG_CLASS}", 128),
        ("LIMIT = 128\nclass K:\n    x = (LIMIT := 3)\n", 128),
        # decorators, bases and defaults run where the statement stands
        (
            f"LIMIT = 128\ndef reg(x):\n    return lambda c: c\n@reg(LIMIT := 256)\n{BIG_CLASS}",
            Unknown,
        ),
        ("LIMIT = 128\nclass K(metaclass=(LIMIT := type)):\n    pass\n", Unknown),
        ("LIMIT = 128\ndef h(a=(LIMIT := 5)):\n    return a\n", Unknown),
    ],
)
def test_walrus_binds_where_python_binds_it(tmp_path, header, want):
    it, cls = load(tmp_path, cm("f", "return LIMIT"), header=HEADER + header)
    if want is Unknown:
        with pytest.raises(Unknown, match="not evaluated"):
            ask(it, cls, "f")
    else:
        assert ask(it, cls, "f") == want


def test_a_class_whose_walrus_sits_in_its_body_is_not_parsed_to_index_the_module(tmp_path):
    """Only its header can bind a module name: the class stays lazy (the members a
    question reads are parsed, not the whole class)."""
    it, cls = load(tmp_path, cm("f", "return Big().g()"), header=HEADER + BIG_CLASS)
    module = it.module(MODULE)
    (piece,) = [c for c in module.chunks if c.text.startswith("class Big")]
    assert not piece.parsed
    assert ask(it, cls, "f") == 3
    assert not piece.parsed


def test_module_level_loop_binding_is_unknown(tmp_path):
    header = HEADER + "LIMIT = 128\nfor LIMIT in (256,):\n    pass\n"
    it, cls = load(tmp_path, cm("f", "return LIMIT"), header=header)
    with pytest.raises(Unknown, match="not evaluated"):
        ask(it, cls, "f")
