"""Fuzzing the evaluator: random small method bodies, and garbage in a backend file, a
class body or a method, each question ending as an answer, Unknown or Raised within
its budget, in one contained, traced child per run (slow: tox -e heavy)."""

from __future__ import annotations

import ast
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from containment import CAN_CONTAIN, progress
from hostile_bodies import FILE, MODULE, PEAK_BYTES, contained
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runtime_trees import runtime_backend
from treebuilder import backend_source

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter, Raised, Unknown
from sphinxext_attn.source.tree import SourceTree

pytestmark = pytest.mark.skipif(
    not CAN_CONTAIN,
    reason="the containment harness needs fork() and /proc (Linux)",
)


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
