"""Method bodies built to make the evaluator loop, recurse or allocate without bound,
and the harness that evaluates them contained (shared by test_hostile_limits.py,
test_hostile_analyze.py and test_hostile_fuzz.py).

Each is evaluated in a forked child (capped address space, killed after a generous
limit) so that a regression fails the test instead of hanging or exhausting the
machine; the child reports the outcome, the steps left of the evaluator's budget and
peak growth of its resident memory. Every body must end as :class:`Unknown` (with its reason) or
:class:`Raised`, stopped by the evaluator's own limits (the step budget runs out only
where the reason says so; the size and depth guards stop the others before it does)
in 200 MB. No test here measures time: the machines are shared and noisy, and the
budgets, not the clock, are what bound the work. ``analyze()`` on a tree holding such
a backend must still build the other rows and name the file in a diagnostic."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path
from typing import Any

from containment import contain

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
