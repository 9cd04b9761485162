"""Edges a sampled mutation run found unpinned in the evaluator, each test failing
with the mutant it was written for.

Mutants argued equivalent (no input tells them from the product; those of the values
and operators are in test_mutant_equivalents.py):
- bindings._guard_holds ``kind == "if"`` -> ``is``: every kind is a literal of the
  package's own code (a guard's is set only by bindings' own walk of the syntax), and
  CPython interns such identifier-like literals.
- ops.equal ``left.cls is right.cls`` -> ``==``: PyClass is ``eq=False`` (equality
  is identity).
- checks.run_checks ``found[0] is not body`` -> any other test of ``found[0]``:
  ``memo.units`` holds the body list itself, so while the entry lives no other
  list can have its id, and ``found[0]`` is always ``body``.
- abstract._by_residue ``value.mod or 1`` -> ``or 2``: a head size's ``mod`` is set
  only by ``% c`` with ``c >= 1`` (0 raises ZeroDivisionError), so never falls back.
- lazyclass._whole ``classes[0]`` -> ``classes[-1]``: it is taken only when
  ``len(classes) == 1``.
- machine ``rsplit("/", 1)[-1]`` -> ``rsplit("/", 2)[-1]``: the last piece is
  the same for any split count of at least one.
- stmtmemo.sinks_of ``type(sink) is not list`` -> ``!=`` and builtins.is_instance
  ``PLAIN_TYPES[kind.name] is int`` -> ``==``: a class equals only itself unless its
  metaclass defines ``__eq__``; PLAIN_TYPES holds builtin types, and a frame holds
  builtin values or the package's own classes, none with such a metaclass.
- checks.run_checks ``found[0] is not body`` -> ``found[0] == body``: (as above)
  ``found[0]`` is ``body``, so the mutant only works the units out again each time.
- callmemo._constant_default ``while todo`` -> ``while not todo`` (every default
  taken for a constant): a default is evaluated through scope.remember, which shares
  a mutable one, so a call that changes it bumps ``class_writes``, part of the key
  of every uncached call; a ``functools.cache`` one is keyed by the arguments passed,
  as CPython keys it.
- lazyclass.lazy_class ``len(chunk.text) < LAZY_CHARS`` -> ``<=``: a class of exactly
  LAZY_CHARS characters is parsed whole instead of member by member; both give the
  same statements (the lazy body falls back to the whole parse on any doubt).
- intsets._step_before ``_next_member(r, point) == r.lo`` -> ``>=``: ``r.lo`` is a
  member of its pattern (:func:`run` moves it onto one) above ``point`` (the runs
  are disjoint and in order of start), and ``_next_member`` is the smallest member
  above ``point``, so it is never larger than ``r.lo``.
- builtins._callable ``args[0]`` -> ``args[-1]``: ``callable()`` with more than one
  positional argument raises TypeError before it runs (builtins._ARITY), so
  ``args`` holds at most one value, and with none both raise IndexError (unknown).
- abstract_str.compare ``equal(left, right) == isinstance(op, ast.Eq)`` -> ``is``:
  ``equal`` returns True, False or ``StrExplorer.decide``'s answer (True, False or
  an ``==`` of two ints), always a bool, and two bools are equal only if identical.
- ``is MISSING`` -> ``== MISSING`` (instances, objects): MISSING is a bare ``object()``,
  so ``x == MISSING`` is False for every value whose ``__eq__`` gives NotImplemented or
  compares by kind (plain values, Instance, EnumMember, PyFunction, PyClass, External).
  Only an AbstractInt (its ``==`` is unknown) or the question's GpuInstance (``==``
  reads the GPU) differ, and these sites see class members, which hold one only if
  analysed code stores a question's argument on a class: test_object_edges does
  (``cls.hs = head_size``) and kills it for a class's, an instance's, an enum
  member's and ``super()``'s attribute. The sites left look up ``__init__``
  (instances._generated_init) and ``__setattr__`` (fields.frozen_field), which would
  need a head size stored under that dunder's name.
- members.is_enum_member_name ``len(name) > 4`` -> ``>= 4`` (dunder): the only name
  of four characters that starts and ends with ``__`` is ``____``, whose third
  character is ``_``, so it is no dunder either way; ``len(name) > len(pattern)`` ->
  ``>=`` (private): a name equal to ``_Cls__`` ends with ``__``, which is not private.
- members._keeps_members ``return False`` -> ``return None`` (a decorator that does
  not evaluate): its one caller tests ``not _keeps_members(...)``.
- callmemo._Signature.value ``_SHARED if name in self.shared else _DEFAULT`` ->
  ``_DEFAULT``: as for ``_constant_default`` above, a call that changes a shared
  default bumps ``class_writes``, part of every uncached call's key, and a cached
  call keys a default as passed-over (``_DEFAULT``) anyway, as CPython's cache does.
- checks._units ``len(run) > 1`` -> ``> 2`` (or ``>= 1``): a run of flag checks is
  remembered as one _Block or check by check, and either replays what the checks did.
- stmtmemo.StatementMemo.run ``counts[0] += 1`` (or GIVE_UP changed): only decides
  after how many recordings a statement stops being remembered, never an answer.
- bindings.index_bindings ``if not nested: continue``: every caller passes
  ``nested=True`` (scope, members), so the ``continue`` never runs.

Left alive on purpose: ops.printf_size's slack per conversion ``+ 400`` -> ``+ 399``.
The slack stands for what a conversion adds beyond ``str()`` of its value, its width
and its precision (310 characters for ``%f`` of -1e308), and the result is checked
against MAX_ITEMS once built, whatever the estimate. The inputs that tell them apart
have an estimate within one character per conversion above MAX_ITEMS (``('%s' + 'x'
* 99598) % 'a'``: the product gives up on a string CPython builds, the mutant builds
it) or one that crosses a multiple of STEP_BYTES (a step more charged). A test there would pin the
estimate's slack, not a documented limit.
"""

from __future__ import annotations

import ast

import pytest
from evaluator import call_in, tiny_package

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter, Unknown
from sphinxext_attn.pyeval.lazyclass import _member_names
from sphinxext_attn.pyeval.scope import PerCapability, cached, remember
from sphinxext_attn.pyeval.values import CAPABILITY, NODE, External
from sphinxext_attn.source.tree import SourceTree


def test_setting_an_attribute_of_an_outside_object_is_unknown_where_it_is(tmp_path):
    it = Interpreter(SourceTree(tmp_path))
    with pytest.raises(Unknown) as raised:
        it.setattr(External("torch.ops"), "x", 1, NODE, "m.py")
    assert raised.value.where == "m.py"  # a node without a line: the file alone
    stmt = ast.parse("\n\nx.y = 1").body[0]
    with pytest.raises(Unknown) as raised:
        it.setattr(External("torch.ops"), "y", 1, stmt, "m.py")
    assert raised.value.where == "m.py:3" and "setting y" in str(raised.value)


def test_values_that_memo_keys_hold_cannot_change():
    """A bound method, an outside name, an enum member, a builtin and a super() proxy
    are kept in memo keys and shared between answers: they are frozen."""
    import dataclasses

    from sphinxext_attn.pyeval import values

    for kind in (values.Bound, values.External, values.EnumMember, values.Builtin):
        made = kind(*[None] * len(dataclasses.fields(kind)))
        first = dataclasses.fields(kind)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(made, first, 1)
    proxy = values.SuperProxy(*[None] * len(dataclasses.fields(values.SuperProxy)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        proxy.__setattr__(dataclasses.fields(values.SuperProxy)[0].name, 1)


def test_an_except_clause_catches_its_exception_and_its_subclasses_only(tmp_path):
    from evaluator import our_answer, python_answer

    body = [
        "out = []",
        "for error in (ValueError, KeyError, ZeroDivisionError):",
        "    try:",
        "        raise error()",
        "    except ZeroDivisionError:",
        "        out.append('zero')",
        "    except LookupError:",
        "        out.append('lookup')",
        "    except ValueError:",
        "        out.append('value')",
        "return out",
    ]
    want = python_answer("", "\n".join(body))
    assert want == ("ok", ["value", "lookup", "zero"])
    assert our_answer(tmp_path, "", body) == want


def test_each_statement_costs_one_step(tmp_path):
    """``y = 2`` is a step for the statement and one for its constant."""
    from evaluator import ask, cm, load

    spent = []
    for extra in (0, 5):
        lines = ["x = 1", *["y = 2"] * extra, "return x"]
        it, cls = load(tmp_path / str(extra), cm("f", *lines))
        with it.question(steps=10_000) as q:
            ask(it, cls, "f")
        spent.append(q.steps_spent)
    assert spent[1] - spent[0] == 5 * 2


def test_a_global_rebound_at_import_is_found_in_a_module_parsed_whole(tmp_path):
    """A module the page reader already parsed whole has no pieces to look for the
    word ``global`` in: the rebinding is still found."""
    source = "_x = None\n\n\ndef init():\n    global _x\n    _x = 5\n\n\ninit()\n"
    tiny_package(tmp_path, {"vllm/mod.py": source})
    for whole in (False, True):
        tree = SourceTree(tmp_path)
        if whole:
            assert tree.parse("vllm/mod.py") is not None
        it = Interpreter(tree)
        module = it.module("vllm.mod")
        assert (module.chunks is None) is whole
        with pytest.raises(Unknown, match="changed by module-level code") as raised:
            it.module_attr(module, "_x", NODE)
        assert raised.value.where == "vllm/mod.py:9"


def test_a_named_tuple_is_formatted_as_python_formats_it(tmp_path):
    from evaluator import our_answer, python_answer

    prelude = "from typing import NamedTuple\nclass NT(NamedTuple):\n    a: int\n    b: str\n"
    body = ["nt = NT(1, 'x')", "return f'{nt}!'"]
    want = python_answer(prelude, "\n".join(body))
    assert want == ("ok", "NT(a=1, b='x')!")
    assert our_answer(tmp_path, prelude, body) == want


BLOCKED = """
@classmethod
def checks(cls, use_mla: bool, head_size):
    reasons = []
    if use_mla and not cls.MLA:
        reasons.append("mla")
    if cls.MLA and not use_mla:
        reasons.append("not mla")
    if head_size > 256:
        reasons.append("big")
    return reasons

MLA = False
"""


def test_consecutive_checks_reading_every_flag_are_one_block(tmp_path):
    """Checks that read the class and every ``bool`` parameter (no other name) are
    remembered together, as one block."""
    from evaluator import ask, load

    from sphinxext_attn.pyeval.checks import _Block

    it, cls = load(tmp_path, BLOCKED)
    it.lenient_functions = frozenset({"checks"})
    assert [ask(it, cls, "checks", m, 64) for m in (True, False, True)] == [["mla"], [], ["mla"]]
    assert ask(it, cls, "checks", True, 512) == ["mla", "big"]
    (units,) = [units for _, units in it.statement_memo.units.values()]
    blocks = [u for u in units if isinstance(u, _Block)]
    assert len(blocks) == 1 and len(blocks[0].stmts) == 2


STORED_THEN_UNKNOWN = """
@classmethod
def vet(cls, head_size, flag):
    reasons = []
    for size in (head_size, 0):
        if outside_pkg.probe(size):
            reasons.append("probe failed")
    if size > 100:
        reasons.append("big")
    return reasons
"""


def test_a_check_that_binds_a_name_before_it_is_not_evaluated_is_run_again(tmp_path):
    """A skipped check that had bound a name (``size``, 128 on the loop's first
    turn) leaves it unknown: Python would have gone on to bind 0, so the next
    check may not read the stale 128 ("big"); it is unknown for the same reason,
    each time (never replayed from the memo as something else)."""
    from evaluator import HEADER, ask, load

    it, cls = load(tmp_path, STORED_THEN_UNKNOWN, header=HEADER + "import outside_pkg\n")
    it.lenient_functions = frozenset({"vet"})
    for flag in (0, 1):  # (another argument each time: the call memo does not answer)
        reasons = ask(it, cls, "vet", 128, flag)
        assert len(reasons) == 1 and "outside_pkg.probe" in reasons[0], reasons
        assert reasons[0].startswith("not evaluated: ")
    assert len({str(u) for u in it.skipped_checks}) == 1


def test_a_call_that_raises_is_remembered_like_one_that_answers(tmp_path):
    """Asked again with the same arguments, a call that raised raises the same at
    once (the call memo keeps failures too): no step is spent running it again."""
    from evaluator import ask, cm, load

    from sphinxext_attn.pyeval import Raised

    body = cm("f", "n = 0", "for i in range(40):", "    n += i", "raise ValueError(n)")
    it, cls = load(tmp_path, body)
    spent = []
    for _ in range(2):
        with it.question(steps=10_000) as q, pytest.raises(Raised) as raised:
            ask(it, cls, "f")
        assert raised.value.kind == "ValueError"
        spent.append(q.steps_spent)
    assert spent[0] > 40 and spent[1] < 5, spent


TWO_LISTS = """
@classmethod
def checks(cls, use_mla: bool):
    reasons = []
    notes = []
    if use_mla and not cls.MLA:
        reasons.append("mla")
    if use_mla:
        notes.append("mla asked")
    return reasons, notes

MLA = False
"""


def test_flag_checks_appending_to_other_lists_are_not_one_block(tmp_path):
    """A block replays what was appended to its first check's lists only: a flag
    check that appends to another list (its name sorting before or after) starts a block, so
    its reason is there on every call, remembered or not."""
    from evaluator import ask, load

    it, cls = load(tmp_path, TWO_LISTS)
    it.lenient_functions = frozenset({"checks"})
    want = (["mla"], ["mla asked"])
    assert [ask(it, cls, "checks", True) for _ in range(3)] == [want] * 3
    assert ask(it, cls, "checks", False) == ([], [])


#: a decorated class past line 256 whose piece is cut inside it (a line of its body
#: at column 0 in parentheses), found again in the file parsed whole by its first line
FILLER = "".join(f"F{i} = {i}\n" for i in range(260))
CUT_CLASS = (
    "def keep(c):\n    return c\n\n\n@keep\nclass Big:\n"
    + "".join(f"    def m{i}(self):\n        return {i}\n" for i in range(200))
    + "    x = (\nint(7))\n"
)


def test_a_class_cut_wrong_past_line_256_is_found_in_the_file_parsed_whole(tmp_path):
    """Its members do not parse alone, nor does its piece: the class is looked up in
    the whole file by the line it starts on (its decorator's), compared by value."""
    from evaluator import HEADER, ask, cm, load

    it, cls = load(
        tmp_path, cm("f", "return Big.x, Big().m3()"), header=HEADER + FILLER + CUT_CLASS
    )
    module = it.module("vllm.v1.attention.backends.my_attn")
    (piece,) = [c for c in module.chunks if c.text.startswith("@keep")]
    assert piece.line > 256  # (CPython shares int objects up to 256 only)
    assert ask(it, cls, "f") == (7, 3)


def test_a_value_that_read_a_fact_but_not_the_gpu_is_one_value_for_every_gpu(tmp_path):
    """Remembered plainly: read again (on another GPU) it brings its fact, not the GPU
    (``read & CAPABILITY`` -> ``read // CAPABILITY`` made it per GPU, and every later
    read of it a read of the GPU)."""
    it = Interpreter(SourceTree(tmp_path), Machine())
    store: dict[str, object] = {}

    def from_a_fact() -> int:
        it.note_fact("VLLM_X", "unset")
        return 3

    it.capability, it.capability_read = (9, 0), 0
    assert remember(store, "X", it, from_a_fact) == 3
    assert store["X"] == 3  # not per capability
    it.capability, it.capability_read = (8, 0), 0
    assert cached(store, "X", it) == 3
    assert it.capability_read & CAPABILITY == 0
    assert it.facts_of(it.capability_read) == [("VLLM_X", "unset")]

    def from_the_gpu() -> int:
        it.read_gpu()
        return 4

    remember(store, "Y", it, from_the_gpu)
    assert isinstance(store["Y"], PerCapability)


def test_the_names_a_member_binds_are_read_from_its_first_line():
    """A decorated member binds its ``def``'s name; any other member, what its
    statement binds (an assignment is no ``def``: the regular expression finds none)."""
    assert _member_names("FOO = 1\n") == ["FOO"]
    assert _member_names("@classmethod\ndef get_name(cls):\n    return 'X'\n") == ["get_name"]
    assert _member_names("@dataclass\nclass Inner:\n    x: int = 1\n") == ["Inner"]


def test_a_name_is_taken_from_the_first_module_that_defines_it(tmp_path):
    """A home not in the tree, or one without the name, is passed over for the next;
    None when no home defines it."""
    it = tiny_package(tmp_path, {"vllm/old.py": "OTHER = 1\n", "vllm/new.py": "HELPER = 2\n"})
    homes = ["vllm.gone", "vllm.old", "vllm.new"]
    assert it.first_defined(homes, "HELPER") == 2
    assert it.first_defined(homes[:2], "HELPER") is None


def test_only_import_module_imports_a_module_given_by_name(tmp_path):
    """Another call outside the tree given a module's name (``alib.load``, whose
    name sorts before ``importlib.import_module``) is unknown, not the module."""
    code = (
        "import importlib\nfrom alib import load\n\n"
        "def imported():\n    return importlib.import_module('vllm.other').X\n\n"
        "def loaded():\n    return load('vllm.other').X\n"
    )
    it = tiny_package(tmp_path, {"vllm/other.py": "X = 1\n", "vllm/code.py": code})
    assert call_in(it, "vllm.code", "imported") == 1
    with pytest.raises(Unknown, match="alib.load"):
        call_in(it, "vllm.code", "loaded")


def test_class_decorators_reading_each_other_are_unknown_not_a_traceback(tmp_path):
    """``A``'s decorator reads a member of ``B`` and ``B``'s one of ``A`` (classes
    are read lazily): a member neither defines is looked for without end, and the
    look-up is unknown for ``A``'s decorator, outside any question too."""
    source = "@B.d\nclass A:\n    pass\n\n@A.d\nclass B:\n    pass\n"
    it = tiny_package(tmp_path, {"vllm/code.py": source})
    module = it.module("vllm.code")
    assert module is not None
    cls = module.lookup("A", it, NODE)
    with pytest.raises(Unknown, match=r"A has a class decorator that is not evaluated"):
        it.getattr(cls, "x", NODE, "vllm/code.py")
