"""Method bodies built to make the evaluator loop, recurse or allocate without bound.

Each is evaluated in a forked child (capped address space, killed after a generous
limit) so that a regression fails the test instead of hanging or exhausting the
machine; the child reports the outcome, the steps left of the evaluator's budget and
peak growth of its resident memory. Every body must end as :class:`Unknown` (with its reason) or
:class:`Raised`, stopped by the evaluator's own limits (the step budget runs out only
where the reason says so; the size and depth guards stop the others before it does)
in 200 MB. No test here measures time: the machines are shared and noisy, and the
budgets, not the clock, are what bound the work. ``analyze()`` on a tree holding such
a backend must still build the other rows and name the file in a diagnostic.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from containment import CAN_CONTAIN, contain, progress
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runtime_trees import runtime_backend
from treebuilder import backend_source

from sphinxext_attn.analysis.pipeline import analyze
from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter, Raised, Unknown
from sphinxext_attn.source.tree import SourceTree

MODULE = "vllm.v1.attention.backends.my_attn"
FILE = "vllm/v1/attention/backends/my_attn.py"
#: A child still running after this long is killed and the test fails (containment,
#: not a speed check: a bounded body ends in well under a second).
LIMIT = 120.0
PEAK_BYTES = 200 * 2**20
#: Address space a child may add to what it inherits: enough for any bounded body.
EXTRA_ADDRESS_SPACE = 768 * 2**20
#: Steps per question, as the runtime profile's Asker gives each call.
STEPS = 50_000

pytestmark = pytest.mark.skipif(
    not CAN_CONTAIN,
    reason="the containment harness needs fork() and /proc (Linux)",
)


def contained(
    fn: Callable[..., Any], *args: Any, limit: float = LIMIT, traced: bool = False
) -> tuple[Any, int]:
    """Run ``fn(*args)`` in a forked child: (outcome, peak bytes); killed after ``limit`` s
    without a report (tests/containment.py)."""
    out = contain(
        fn,
        *args,
        idle=limit,
        extra_address_space=EXTRA_ADDRESS_SPACE,
        memory="traced" if traced else "resident",
    )
    if out.kind == "done":
        return out.value, out.peak
    if out.kind == "escaped":
        name, _, message = out.detail.partition(": ")
        return ("escaped", name, message), out.peak
    if out.kind == "hung":
        why = f"silent for {limit} s: no limit of its own stopped it; last example: {out.last}"
        return ("killed", why, ""), 0
    return ("died", out.detail, ""), 0


def evaluate(root: Path, method: str = "f") -> tuple[str, str, str, int]:
    """Ask MyBackend.``method``(); ("value"|"unknown"|"raised", detail, where, steps left)."""
    it = Interpreter(SourceTree(root), Machine())
    it.budget.steps = STEPS
    try:
        cls = it.module_attr(it.module(MODULE), "MyBackend", ast.Pass())
        value = it.call(it.getattr(cls, method, ast.Pass(), ""), [], {}, ast.Pass(), "")
    except Unknown as exc:
        return "unknown", exc.reason, exc.where, it.budget.steps
    except Raised as exc:
        return "raised", exc.kind, exc.message[:200], it.budget.steps
    return "value", repr(value)[:200], "", it.budget.steps


def method(*lines: str) -> str:
    return "@classmethod\ndef f(cls):\n" + "".join(f"    {line}\n" for line in lines)


HOSTILE: dict[str, tuple[str, str]] = {  # name: (class body, reason)
    "range(10**12)": (method("return len(range(10**12))"), "too long"),
    "list(range(10**12))": (method("return [i for i in range(10**12)]"), "too long"),
    "10**10**10": (method("return 10**10**10"), "too large"),
    "2**(10**9)": (method("return 2**(10**9)"), "too large"),
    "(-3)**(10**9)": (method("return (-3)**(10**9)"), "too large"),
    "1 << 10**9": (method("return 1 << 10**9"), "too large"),
    "repeated squaring": (method("x = 2 ** 4000", "return x * x * x"), "too large"),
    "'x' * 10**10": (method("return 'x' * 10**10"), "too long"),
    "[0] * 10**10": (method("return [0] * 10**10"), "too long"),
    "(0,) * 10**10": (method("return len((0,) * 10**10)"), "too long"),
    "doubling a string": (method("s = 'x'", "for i in range(64):", "    s += s"), "too long"),
    "list += list": (method("a = [0] * 90000", "a += a", "a += a"), "too long"),
    "list *= n": (method("a = [0] * 90000", "a *= 100000"), "too long"),
    "replace chain": (
        method("return 'a'.replace('', 'b' * 1000).replace('', 'b' * 1000).replace('', 'c')"),
        "too long",
    ),
    "range(10**6) squared": (
        method("return len([i * j for i in range(10**6) for j in range(10**6)])"),
        "too long",
    ),
    "range(10**5) squared": (
        method("return len([i * j for i in range(10**5) for j in range(10**5)])"),
        "budget",
    ),
    "self recursion": ("@classmethod\ndef f(cls, n=0):\n    return cls.f(n + 1)\n", "too deeply"),
    "mutual recursion": (
        method("return cls.g()") + "@classmethod\ndef g(cls):\n    return cls.f()\n",
        "too deeply",
    ),
    "recursive lambda": (method("g = lambda: g()", "return g()"), "too deeply"),
    "while True": (method("while True:", "    pass"), "While"),
    "-~ nested 2000 deep": (method("return " + "-~" * 1000 + "1"), "too deeply"),
    "1+1+... 2000 terms": (method("return " + "+".join(["1"] * 2000)), "too deeply"),
    "a.b.c... 2000 deep": (method("return cls" + ".x" * 2000), "too deeply"),
    "(((1))) 5000 deep": (method("return " + "(" * 5000 + "1" + ")" * 5000), "cannot be parsed"),
    "default arg nested 2000 deep": (
        "@classmethod\ndef f(cls, a=" + "-" * 2000 + "1):\n    return a\n",
        "too deeply",
    ),
    "class body attr nested": ("x = " + "-" * 2000 + "1\n" + method("return cls.x"), "too deeply"),
    # work or memory proportional to sizes, charged before it is done
    "join of 50000 x 50000 chars": (
        method("s = ['x' * 50000] * 50000", "return len(''.join(s))"),
        "too long",
    ),
    "format padding 10**9": (method("return f'{1:>1000000000}'"), "too long"),
    # more digits than int() reads from a string (4300): never converted
    "format width of 5000 digits": (method("return f'{1:>" + "9" * 5000 + "}'"), "too long"),
    "printf padding 10**9": (method("return '%1000000000d' % 1"), "too long"),
    "printf of nested lists": (
        method("a = [1]", "for i in range(60):", "    a = [a, a]", "return '%s' % (a,)"),
        "not evaluated",
    ),
    "list of big lists": (
        method("return len([[0] * 99999 for _ in range(99999)])"),
        "budget",
    ),
    "`in` over a long list per step": (
        method("r = list(range(100000))", "return len([-1 in r for _ in range(100000)])"),
        "budget",
    ),
    "sum() per step": (
        method("return len([sum(range(100000)) for _ in range(100000)])"),
        "budget",
    ),
    "slice assignment doubling a list": (
        method("a = [0] * 1000", "for i in range(64):", "    a[0:0] = a"),
        "too long",
    ),
    "copies of a long list per step": (
        method("r = list(range(100000))", "return len([r[:] for _ in range(100000)])"),
        "budget",
    ),
    "== of shared nested lists": (
        method("a = [1]", "b = [1]", "for i in range(60):", "    a = [a, a]", "    b = [b, b]")
        + "    return a == b\n",
        "budget",
    ),
    "< of shared nested lists": (
        method("a = [1]", "b = [1]", "for i in range(60):", "    a = [a, a]", "    b = [b, b]")
        + "    return a < b\n",
        "budget",
    ),
    "hash of shared nested tuples": (
        method("t = (1,)", "for i in range(60):", "    t = (t, t)", "return {t: 1}"),
        "budget",
    ),
    "list.count of shared nested tuples": (
        method("t = (1,)", "u = (1,)", "for i in range(60):", "    t = (t, t)", "    u = (u, u)")
        + "    return [t].count(u)\n",
        "budget",
    ),
    "dict == over 1500-deep tuples": (
        method("t = (1,)", "u = (1,)", "for i in range(1500):", "    t = (t,)", "    u = (u,)")
        + "    return {1: t} == {1: u}\n",
        "too deeply",
    ),
    "hash of a 1500-deep tuple": (
        method("t = (1,)", "for i in range(1500):", "    t = (t,)", "return {t: 1}"),
        "too deeply",
    ),
    "raise with a shared nested message": (
        method("t = (1,)", "for i in range(60):", "    t = (t, t)", "raise ValueError(t)"),
        "budget",
    ),
}


def check(outcome: tuple[Any, int], reason: str) -> None:
    (kind, detail, where, *left), peak = outcome
    assert kind in ("unknown", "raised"), outcome
    assert reason in detail, outcome
    assert kind == "raised" or where.startswith(FILE), outcome
    # the step budget ran out exactly when that is the reason given
    assert (left[0] < 0) == ("budget" in detail), outcome
    assert peak < PEAK_BYTES, outcome


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_body_is_stopped_by_a_limit_in_bounded_memory(tmp_path, name):
    body, reason = HOSTILE[name]
    runtime_backend(tmp_path, body)
    check(contained(evaluate, tmp_path), reason)


#: Expressions whose Python errors once escaped as tracebacks: (expression, outcome).
ERRORS = [
    ("dict([[[1], 2]])", "TypeError"),
    ("{k: 1 for k in [[1]]}", "TypeError"),
    ("set([[1]])", "unhashable"),
    ("[1, 2][::0]", "ValueError"),
    ("range(0, 10, 0)", "ValueError"),
    ("'x'.split(None, 10**30)", "OverflowError"),
    ("int(float('inf'))", "OverflowError"),
    ("2.0 ** 10000", "OverflowError"),
    ("(-8) ** (1 / 3)", "complex numbers not evaluated"),
    ("MultipleOf(1, 2)", "TypeError"),
    ("len()", "not evaluated"),
    ("isinstance(1)", "not evaluated"),
    ("issubclass(1)", "not evaluated"),
    ("'a'.replace('a')", "not evaluated"),
    ("range()", "not evaluated"),
    ("str(1, 2, 3)", "not evaluated"),
    ("__import__('math').sqrt(-1)", "not evaluated"),
]


@pytest.mark.parametrize(("expr", "outcome"), ERRORS, ids=[e for e, _ in ERRORS])
def test_python_errors_are_raised_or_unknown_never_tracebacks(tmp_path, expr, outcome):
    runtime_backend(tmp_path, method(f"return {expr}"))
    check(contained(evaluate, tmp_path), outcome)


#: Values whose native walk is exponential: two equal, distinct 2**60-leaf trees.
SHARED = {
    "lists": ["x = [1]", "y = [1]", "for i in range(60):", "    x = [x, x]", "    y = [y, y]"],
    "tuples": ["x = (1,)", "y = (1,)", "for i in range(60):", "    x = (x, x)", "    y = (y, y)"],
}
#: Everything that walks a value: hashing, comparing, ordering, printing, memo keys.
WALKS = [
    "{x: 1}", "{x}", "set([x])", "{1: x} == {1: y}", "x == y", "[x] == [y]", "x < y",
    "x in [y]", "[y].count(x)", "[y].index(x)", "{x: 1}.get(y)", "sorted([x, y])",
    "max([x, y])", "str(x)", "f'{x}'", "'%s' % (x,)", "cls.g(x)", "{k: 1 for k in [x]}",
    "cls.h(x)",
]  # fmt: skip
#: ``g`` takes the value and does nothing with it; ``h`` stores it as a dict key.
TAKERS = (
    "@classmethod\ndef g(cls, v):\n    return 1\n"
    "@classmethod\ndef h(cls, v):\n    d = {}\n    d[v] = 1\n    return d\n"
)


@pytest.mark.parametrize("walk", WALKS)
@pytest.mark.parametrize("shape", SHARED)
def test_walking_shared_nesting_is_charged(tmp_path, shape, walk):
    runtime_backend(tmp_path, method(*SHARED[shape], f"return {walk}") + TAKERS)
    (kind, detail, _, left), peak = contained(evaluate, tmp_path)
    # passing it to a call walks nothing (a memo key that would be too big is not made)
    assert (kind, detail) == ("value", "1") if walk == "cls.g(x)" else kind != "value"
    assert kind in ("value", "unknown", "raised"), (kind, detail)
    assert left >= 0 or "budget" in detail, (detail, left)
    assert peak < PEAK_BYTES, (detail, peak)


def summary(root: Path) -> dict[str, Any]:
    """What ``analyze(root)`` gives, reduced to plain data a child can send back."""
    analysis = analyze(root)
    return {
        "rows": {r.name: dict(r.unknown) for r in analysis.backends},
        "diagnostics": [
            (d.message, d.location.path if d.location else None) for d in analysis.diagnostics
        ],
        "warned": [d.message for d in analysis.diagnostics if not d.release],
    }


OTHERS = {"FLASH_ATTN", "TRITON_ATTN", "FLASHINFER", "TRITON_MLA", "CPU_ATTN"}
IN_ANALYZE = [
    "range(10**12)",
    "10**10**10",
    "'x' * 10**10",
    "mutual recursion",
    "self recursion",
    "while True",
    "-~ nested 2000 deep",
    "range(10**5) squared",
]

#: of those, the ones that are code outside the subset, not a limit hit
UNSUPPORTED = {"while True"}


@pytest.mark.parametrize("name", IN_ANALYZE)
def test_analyze_keeps_other_rows_and_names_the_file(tmp_path, name):
    body = HOSTILE[name][0].replace("def f(cls", "def get_supported_head_sizes(cls")
    body = body.replace("cls.f(", "cls.get_supported_head_sizes(")
    runtime_backend(tmp_path, body)
    outcome, peak = contained(summary, tmp_path)
    assert isinstance(outcome, dict), outcome
    assert set(outcome["rows"]) >= OTHERS, outcome
    assert all(not outcome["rows"][n] for n in OTHERS), outcome
    assert "Head Sizes" in outcome["rows"]["MY_ATTN"], outcome
    assert any(path == FILE and "MY_ATTN" in msg for msg, path in outcome["diagnostics"]), outcome
    # a limit hit is hostile code (a warning); code outside the subset is a note
    warned = any("MY_ATTN" in msg for msg in outcome["warned"])
    assert warned == (name not in UNSUPPORTED), outcome
    assert peak < PEAK_BYTES


CYCLES = {
    "base is itself": "class MyBackend(MyBackend):\n    pass\n",
    "cyclic bases": "class A(B):\n    pass\n\n\nclass B(A):\n    pass\n\n\n"
    "class MyBackend(A):\n    pass\n",
    "base is a call result": "class MyBackend(make(1)):\n    pass\n\n\n"
    "def make(n):\n    return make(n)\n",
}


@pytest.mark.parametrize("name", CYCLES)
def test_cyclic_or_unresolvable_bases_end(tmp_path, name):
    runtime_backend(tmp_path, "pass\n")
    path = tmp_path / FILE
    text = path.read_text().replace("class MyBackend(AttentionBackend):\n    pass\n", "")
    path.write_text(text + CYCLES[name])
    outcome, _ = contained(summary, tmp_path)
    assert isinstance(outcome, dict), outcome
    assert set(outcome["rows"]) >= OTHERS, outcome
    mine = outcome["rows"].get("MY_ATTN")
    named = [msg for msg, where in outcome["diagnostics"] if where == FILE]
    assert mine is None or (mine and named), outcome  # no row, or its unknowns named


DEEP = "-" * 2000 + "1"
MODULE_LEVEL = {  # name: (file, source appended)
    "registered class name rebound to a deep expression": (FILE, f"\n\nMyBackend = {DEEP}\n"),
    "CacheDType bound to a deep expression": ("vllm/config/cache.py", f"CacheDType = {DEEP}\n"),
}


@pytest.mark.parametrize("name", MODULE_LEVEL)
def test_deep_module_level_binding_does_not_escape_analyze(tmp_path, name):
    rel, source = MODULE_LEVEL[name]
    runtime_backend(tmp_path, "pass\n", extra={"vllm/config/__init__.py": ""})
    path = tmp_path / rel
    path.write_text((path.read_text() if path.exists() else "") + source)
    outcome, _ = contained(summary, tmp_path)
    assert isinstance(outcome, dict), outcome
    assert set(outcome["rows"]) >= OTHERS, outcome


# -- fuzzing: random small method bodies, and garbage --------------------------------
EXAMPLES = int(os.environ.get("ATTN_FUZZ_EXAMPLES", "100"))
NAMES = [
    "cls", "x", "None", "True", "torch.float16", "AttentionType.DECODER", "AttentionType",
    "DeviceCapability(9, 0)", "MultipleOf(16)", "current_platform", "cls.supported_dtypes",
    "range(3)", "[]", "{}", "os.getenv('VLLM_X', '1')", "cls.__name__", "10**12", "2**64",
    "current_platform.get_device_capability()", "cls.get_impl_cls()",
]  # fmt: skip
BINOPS = ["+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^"]
CMPOPS = ["==", "!=", "<", "<=", ">", ">=", "in", "not in", "is", "is not"]
METHODS = ["f", "g", "h", "supports_head_size", "get_supported_head_sizes", "supports_dcp"]
LEAF = st.one_of(
    st.integers(-1000, 1000).map(str),
    st.text(alphabet="ab%{} ", max_size=4).map(lambda t: f'"{t}"'),
    st.sampled_from(NAMES),
)


def _grow(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    two = st.tuples(inner, inner)
    return st.one_of(
        st.tuples(inner, st.sampled_from(BINOPS), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(inner, st.sampled_from(CMPOPS), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(inner, st.sampled_from(["and", "or"]), inner).map(" ".join),
        st.tuples(st.sampled_from(["not ", "-", "~"]), inner).map(lambda t: f"({t[0]}{t[1]})"),
        st.tuples(st.sampled_from(METHODS), inner).map(lambda t: f"cls.{t[0]}({t[1]})"),
        two.map(lambda t: f"[{t[0]}, {t[1]}]"),
        two.map(lambda t: f"({t[0]})[{t[1]}]"),
        st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
        inner.map(lambda e: f"[v for v in {e}]"),
        inner.map(lambda e: f"f'{{{e}}}'" if "'" not in e else f"str({e})"),
        inner.map(lambda e: f"({e}).major"),
        inner.map(lambda e: f"len({e})"),
        inner.map(lambda e: f"isinstance({e}, MultipleOf)"),
    )


EXPR = st.recursive(LEAF, _grow, max_leaves=10)
STMT = st.one_of(
    EXPR.map(lambda e: [f"x = {e}"]),
    EXPR.map(lambda e: [f"return {e}"]),
    st.tuples(EXPR, EXPR, EXPR).map(
        lambda t: [f"if {t[0]}:", f"    return {t[1]}", "else:", f"    x = {t[2]}"]
    ),
    EXPR.map(lambda e: ["for v in range(3):", f"    x = {e}"]),
    EXPR.map(lambda e: ["try:", f"    x = {e}", "except (ValueError, TypeError):", "    x = 0"]),
)
BODY = st.lists(STMT, min_size=1, max_size=4).map(lambda ss: [line for s in ss for line in s])


IMPORTS = "import os\nfrom vllm.platforms import current_platform\n"


@pytest.fixture
def fuzz_root(tmp_path: Path) -> Path:
    return runtime_backend(tmp_path / "tree", "pass\n")


def run_fuzzed(root: Path, source: str | bytes, capability: Any) -> None:
    """One example: the question ends as a value, Unknown or Raised, within the budget."""
    path = root / FILE
    progress(source if isinstance(source, str) else repr(source))  # named if it hangs
    path.write_bytes(source if isinstance(source, bytes) else source.encode())
    it = Interpreter(SourceTree(root), Machine())
    it.budget.steps = 20_000
    it.capability = capability
    try:
        cls = it.module_attr(it.module(MODULE), "MyBackend", ast.Pass())
        it.call(it.getattr(cls, "f", ast.Pass(), ""), [], {}, ast.Pass(), "")
    except Unknown as exc:
        assert it.budget.steps >= 0 or "budget" in exc.reason, exc
    except Raised:
        pass


FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)


@FUZZ
@given(bodies=st.tuples(BODY, BODY, BODY), capability=st.sampled_from([None, (9, 0), (12, 1)]))
def fuzz_method_bodies(root: Path, bodies: Any, capability: Any) -> None:
    source = ""
    for name, args, body in zip(("f", "g", "h"), ("x=1", "x=0", "x=None"), bodies, strict=True):
        source += f"@classmethod\ndef {name}(cls, {args}):\n" + "".join(f"    {b}\n" for b in body)
    run_fuzzed(root, IMPORTS + backend_source("MyBackend", source), capability)


#: garbage for a file, a class body or a method (a name: warmed before the fork, see below)
GARBAGE = st.one_of(st.text(max_size=300), st.binary(max_size=300))


@FUZZ
@given(garbage=GARBAGE, where=st.sampled_from(["body", "file", "method"]))
def fuzz_garbage(root: Path, garbage: str | bytes, where: str) -> None:
    text = garbage.decode("latin-1") if isinstance(garbage, bytes) else garbage
    if where == "file":
        run_fuzzed(root, garbage, (9, 0))
    elif where == "body":
        run_fuzzed(root, backend_source("MyBackend", text), (9, 0))
    else:
        lines = "".join(f"    {line}\n" for line in text.split("\n"))
        body = "@classmethod\ndef f(cls):\n" + lines
        run_fuzzed(root, backend_source("MyBackend", body), None)


def _fuzz(which: Callable[[Path], None], root: Path) -> str:
    which(root)
    return "done"


#: Each fuzz run is one forked child, killed when no example has started for this
#: many seconds, and the hanging example is named: containment for a hang (an
#: example takes milliseconds), not a speed check.
IDLE = 120.0


@pytest.mark.slow
@pytest.mark.parametrize("which", [fuzz_method_bodies, fuzz_garbage], ids=["bodies", "garbage"])
def test_fuzzed_sources_answer_or_say_why(fuzz_root, which):
    """Random small method bodies, and garbage in a backend file, a class body or a method:
    every question ends as an answer, Unknown or Raised (the child reports any other
    exception, with Hypothesis's falsifying example)."""
    # Hypothesis builds its table of characters for text() when it first validates the
    # strategy: done here, so the traced child (about 15 times slower) inherits it and
    # the wait for its first example is not that table (a loaded CI machine took 120 s).
    GARBAGE.validate()
    BODY.validate()
    # a thousand examples: the peak in use, not the resident size the allocator keeps
    outcome, peak = contained(_fuzz, which, fuzz_root, limit=IDLE, traced=True)
    assert outcome == "done", outcome
    assert peak < PEAK_BYTES
