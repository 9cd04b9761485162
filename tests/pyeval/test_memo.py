"""The evaluator's memos (core/pyeval/callmemo, stmtmemo): asked many times with
different values, every answer is the one a fresh evaluation gives."""

from __future__ import annotations

import ast
from typing import Any

from runtime_trees import runtime_backend

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.pyeval.values import NODE
from sphinxext_attn.source.tree import SourceTree

MODULE = "vllm.v1.attention.backends.my_attn"
HEADER = "from vllm.platforms import current_platform\n"

BODY = """
@classmethod
def pick(cls, a, b, c=3):
    if a:
        return b
    return c

@classmethod
def checks(cls, head_size, has_sink, use_mla, flag=False):
    reasons = []
    if head_size not in cls.SIZES:
        reasons.append("head_size not supported")
    if has_sink and not cls.supports_sink():
        reasons.append("sink not supported")
    if use_mla != cls.is_mla():
        reasons.append("mla mismatch")
    label = "big" if head_size > 128 else "small"
    if flag:
        reasons.append(label)
    if current_platform.get_device_capability().major < 9:
        reasons.append("old GPU")
    return reasons

@classmethod
def grow(cls):
    cls.SIZES = (*cls.SIZES, 256)
    return len(cls.SIZES)

SIZES = (64, 128)
"""

CHILD = """

class Child(MyBackend):
    @classmethod
    def pick(cls, a, b, c=3):
        return ("child", super().pick(a, b, c))
"""


def load(tmp_path: Any) -> tuple[Interpreter, Any, Any]:
    runtime_backend(tmp_path, BODY, header=HEADER)
    path = tmp_path / (MODULE.replace(".", "/") + ".py")
    path.write_text(path.read_text() + CHILD)
    it = Interpreter(SourceTree(tmp_path), Machine())
    module = it.module(MODULE)
    return it, it.module_attr(module, "MyBackend", NODE), it.module_attr(module, "Child", NODE)


def ask(it: Interpreter, cls: Any, name: str, *args: Any, cap: Any = (9, 0), **kw: Any) -> Any:
    it.capability = cap
    return it.call(it.getattr(cls, name, NODE, ""), list(args), kw, NODE, "")


def test_call_memo_keys_on_what_was_read(tmp_path):
    it, cls, child = load(tmp_path)
    answers = [ask(it, cls, "pick", a, b) for a, b in [(0, 1), (0, 2), (1, 5), (1, 6), (0, 7)]]
    assert answers == [3, 3, 5, 6, 3]
    assert ask(it, cls, "pick", 0, 1, 9) == 9
    assert ask(it, cls, "pick", 0, 1, c=8) == 8
    assert ask(it, cls, "pick", a=1, b=4) == 4
    # super() reads the class without naming it: keyed by every argument
    assert ask(it, child, "pick", 1, 2) == ("child", 2)
    assert ask(it, child, "pick", 0, 2) == ("child", 3)


def test_statement_memo_gives_fresh_answers(tmp_path):
    it, cls, _ = load(tmp_path)
    it.lenient_functions = frozenset({"checks"})
    cases = [
        (dict(head_size=64, has_sink=False, use_mla=False), (9, 0)),
        (dict(head_size=96, has_sink=True, use_mla=False), (9, 0)),
        (dict(head_size=64, has_sink=False, use_mla=True, flag=True), (8, 0)),
        (dict(head_size=192, has_sink=False, use_mla=False, flag=True), (9, 0)),
        (dict(head_size=64, has_sink=False, use_mla=False), (8, 6)),
    ]
    memoised = [ask(it, cls, "checks", cap=cap, **kw) for kw, cap in cases * 2]
    fresh = []
    for kw, cap in cases * 2:
        it2, cls2, _ = Interpreter(SourceTree(tmp_path), Machine()), None, None
        cls2 = it2.module_attr(it2.module(MODULE), "MyBackend", NODE)
        it2.lenient_functions = frozenset({"checks"})
        fresh.append(ask(it2, cls2, "checks", cap=cap, **kw))
    assert memoised == fresh
    assert memoised[:5] == [
        [],
        ["head_size not supported", "sink not supported"],
        ["mla mismatch", "small", "old GPU"],
        ["head_size not supported", "big"],
        ["old GPU"],
    ]
    assert it.statement_memo.effects  # the checks were remembered


def test_class_attribute_write_is_seen(tmp_path):
    it, cls, _ = load(tmp_path)
    it.lenient_functions = frozenset({"checks"})
    kw = dict(head_size=256, has_sink=False, use_mla=False)
    assert ask(it, cls, "checks", **kw) == ["head_size not supported"]
    assert ask(it, cls, "grow") == 3
    assert ask(it, cls, "checks", **kw) == []


KWARGS = """
@classmethod
def spread(cls, a, *rest, b=1, **extra):
    if a:
        return (rest, b, extra)
    return None
"""


def test_call_memo_keys_varargs_and_keyword_extras(tmp_path):
    runtime_backend(tmp_path, KWARGS, header=HEADER)
    it = Interpreter(SourceTree(tmp_path), Machine())
    cls = it.module_attr(it.module(MODULE), "MyBackend", NODE)
    assert ask(it, cls, "spread", 0, 5) is None
    assert ask(it, cls, "spread", 0, 6, b=2) is None
    assert ask(it, cls, "spread", 1, 5) == ((5,), 1, {})
    assert ask(it, cls, "spread", 1, 6) == ((6,), 1, {})
    assert ask(it, cls, "spread", 1, 6, b=3) == ((6,), 3, {})
    assert ask(it, cls, "spread", 1, extra=4) == ((), 1, {"extra": 4})
    assert ask(it, cls, "spread", 1, extra=5) == ((), 1, {"extra": 5})


def test_an_unreadable_module_is_unknown_each_time_it_is_asked(tmp_path):
    """Found by the real-tree edits: the second question about a module that cannot
    be decoded (or parsed) took it for a module outside the tree, so on one shared
    interpreter the later backends' cells raised AttributeError instead of being
    unknown, and the page differed with and without the command line's cache."""
    import pytest

    from sphinxext_attn.pyeval import Unknown

    files = {
        "vllm/__init__.py": b"",
        "vllm/broken.py": b"X = 1\n\xbf\n",  # cannot be decoded
        "vllm/bad.py": b"def (\n",  # cannot be parsed
    }
    for rel, data in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    it = Interpreter(SourceTree(tmp_path), Machine())
    for dotted in ("vllm.broken", "vllm.bad", "vllm.broken", "vllm.bad"):
        with pytest.raises(Unknown) as raised:
            it.module(dotted)
        assert dotted in str(raised.value)
    assert it.import_value("vllm.missing").qualname == "vllm.missing"  # not in the tree


def test_a_class_whose_base_raises_raises_each_time_it_is_asked(tmp_path):
    """Found by the real-tree edits (a truncated ``backend.py``): after a class's base
    raised once, the class was kept with no bases at all, so a subclass asked next
    answered from it (``FLASH_ATTN_DIFFKV``'s DCP ``✅`` after ``FLASH_ATTN`` was
    asked on the same interpreter, ``?`` otherwise)."""
    import pytest

    from sphinxext_attn.pyeval import Raised

    files = {
        "vllm/__init__.py": "",
        "vllm/base.py": "X = 1\n",
        "vllm/impl.py": "from vllm.base import Missing\n\nclass Impl(Missing):\n    flag = True\n",
        "vllm/sub.py": "from vllm.impl import Impl\n\nclass Sub(Impl):\n    pass\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    for order in (["vllm.sub"], ["vllm.impl", "vllm.sub", "vllm.impl"]):
        it = Interpreter(SourceTree(tmp_path), Machine())
        for dotted in order:
            name = "Sub" if dotted == "vllm.sub" else "Impl"
            with pytest.raises(Raised):
                cls = it.module_attr(it.module(dotted), name, NODE)
                it.getattr(cls, "flag", NODE, "")


VET = """
@classmethod
def vet(cls, head_size):
    reasons = []
    if head_size not in (64, 128):
        reasons.append("head_size not supported")
    if outside_pkg.probe(head_size):
        reasons.append("probe failed")
    return reasons
"""


def test_a_function_made_lenient_later_is_not_answered_from_its_plain_run(tmp_path):
    """The selector makes ``validate_configuration`` lenient on an interpreter that
    may have asked it plainly before: neither answer may stand for the other."""
    import pytest

    from sphinxext_attn.pyeval import Unknown

    runtime_backend(tmp_path, VET, header=HEADER + "import outside_pkg\n")
    it = Interpreter(SourceTree(tmp_path), Machine())
    cls = it.module_attr(it.module(MODULE), "MyBackend", NODE)
    with pytest.raises(Unknown):
        ask(it, cls, "vet", 96)
    it.lenient_functions = frozenset({"vet"})
    lenient = ask(it, cls, "vet", 96)
    assert lenient[0] == "head_size not supported"
    assert len(lenient) == 2 and "not evaluated" in lenient[1]
    it.lenient_functions = frozenset()
    with pytest.raises(Unknown):
        ask(it, cls, "vet", 96)


HEAVY = """
@classmethod
def heavy(cls, head_size):
    reasons = []
    if cls.count_to(head_size * 10) % 640:
        reasons.append("head_size not supported")
    if head_size > 256:
        reasons.append("too big")
    return reasons

@classmethod
def count_to(cls, n):
    i = 0
    for _ in range(n):
        i += 1
    return i
"""


def test_a_check_stopped_by_the_budget_is_not_remembered(tmp_path):
    """Running out of steps says nothing about the check: asked again with a budget
    to spare, it is evaluated (neither the statement nor the call memo keeps it)."""
    import pytest

    from sphinxext_attn.pyeval.values import Budget, LimitExceeded

    runtime_backend(tmp_path, HEAVY, header=HEADER)
    it = Interpreter(SourceTree(tmp_path), Machine())
    cls = it.module_attr(it.module(MODULE), "MyBackend", NODE)
    # a new size each round: count_to's answers are remembered once complete
    for lenient, size in ((frozenset({"heavy"}), 100), (frozenset(), 110)):
        it.lenient_functions = lenient
        it.budget = Budget(steps=200)
        with pytest.raises(LimitExceeded):
            ask(it, cls, "heavy", size)
        it.budget = Budget()
        assert ask(it, cls, "heavy", size) == ["head_size not supported"]
    assert ask(it, cls, "heavy", 320) == ["too big"]


PAIRS = """
@classmethod
def pairs(cls, head_size):
    reasons = []
    if head_size > 64:
        reasons.append(Pair(head_size, 1))
    return reasons
"""


def test_a_named_tuple_appended_is_made_anew_on_every_call(tmp_path):
    """The evaluator can set a named tuple's fields, so an effect that appends one is
    never replayed: each call holds its own instance, as in Python."""
    header = (
        HEADER
        + "from typing import NamedTuple\n\nclass Pair(NamedTuple):\n    a: int\n    b: int\n"
    )
    runtime_backend(tmp_path, PAIRS, header=header)
    it = Interpreter(SourceTree(tmp_path), Machine())
    cls = it.module_attr(it.module(MODULE), "MyBackend", NODE)
    it.lenient_functions = frozenset({"pairs"})
    first, second = ask(it, cls, "pairs", 96), ask(it, cls, "pairs", 96)
    assert len(first) == len(second) == 1
    assert first[0] is not second[0]


def test_a_replayed_check_still_reports_the_names_it_read(tmp_path):
    """A caller exploring a list-of-reasons function's parameters (the full check)
    takes the ones a run read from its frame: a check answered from the statement
    memo reads no name, yet its names count as read, as on the first run."""
    it, cls, _ = load(tmp_path)
    it.lenient_functions = frozenset({"checks"})
    func = it.getattr(cls, "checks", NODE, "").func
    it.capability = (9, 0)
    seen = []
    for _ in range(2):
        reads: dict[str, None] = {}
        assert it.run_function(func, [cls, 64, False, False], {}, reads=reads) == []
        seen.append(set(reads))
    assert seen[0] == seen[1]
    assert {"head_size", "has_sink", "use_mla", "flag"} <= seen[1]
    # the five ``if`` checks and the ``label`` line: recorded once, then replayed
    counts = it.statement_memo.counts.items()
    replayed = [c for stmt, c in counts if not ast.unparse(stmt).startswith("reasons =")]
    assert len(replayed) == 6 and all(c == [1, 1] for c in replayed), replayed
