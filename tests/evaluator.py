"""Ask the evaluator about invented method bodies, and CPython the same question.

The differential suites (tests/pyeval/test_pyeval_vs_python.py and
test_pyeval_differential.py) compare the two strictly: a case answers exactly
as CPython does, or it is listed in ``known_differences.toml`` as one the
evaluator answers "unknown", and then it must still be unknown. A listed case
that starts answering fails (take it off the list), and so does an unlisted one
that gives up.
"""

from __future__ import annotations

import hashlib
import re
import textwrap
from pathlib import Path
from typing import Any

from known import known
from runtime_trees import runtime_backend
from treebuilder import write_files

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter, Raised, Unknown, World
from sphinxext_attn.pyeval.values import NODE
from sphinxext_attn.source.tree import SourceTree

MODULE = "vllm.v1.attention.backends.my_attn"
FILE = "vllm/v1/attention/backends/my_attn.py"
HEADER = "import os\n\nfrom vllm.platforms import current_platform\n\nCap = DeviceCapability\n"


def load(root: Path, body: str, header: str = HEADER, **kw: Any) -> tuple[Interpreter, Any]:
    runtime_backend(root, body, header=header, **kw)
    it = Interpreter(SourceTree(root), Machine())
    return it, it.module_attr(it.module(MODULE), "MyBackend", NODE)


def tiny_package(root: Path, files: dict[str, str], world: World | None = None) -> Interpreter:
    """An interpreter over a bare ``vllm`` package holding only ``files`` (path under
    ``root`` -> source): for questions no backend class is needed for."""
    write_files(root, {"vllm/__init__.py": "", **files})
    return Interpreter(SourceTree(root), world)


def call_in(it: Interpreter, module: str, name: str, *args: Any, path: str = "") -> Any:
    """Call ``module.name(*args)`` as code outside the tree does (a synthetic node)."""
    found = it.module(module)
    assert found is not None, module
    return it.call(found.lookup(name, it, NODE), list(args), {}, NODE, path)


def cm(name: str, *lines: str, args: str = "") -> str:
    """Source of a classmethod ``name(cls[, args])`` whose body is ``lines``."""
    head = f"@classmethod\ndef {name}(cls{', ' + args if args else ''}):\n"
    return head + "".join(f"    {line}\n" for line in lines) + "\n"


def ask(it: Interpreter, cls: Any, name: str, *args: Any, capability: Any = None) -> Any:
    it.capability = capability
    return it.call(it.getattr(cls, name, NODE, ""), list(args), {}, NODE, "")


# -- the differential comparison ---------------------------------------------------------


def python_answer(prelude: str, body: str) -> tuple[str, Any]:
    """CPython's answer: ("ok", value) or ("raise", exception name). Compiled without
    this file's ``from __future__ import annotations`` (``dont_inherit``): with it,
    ``dataclasses`` reads ``ClassVar[int]`` as a string and takes it for a field."""
    namespace: dict[str, Any] = {"__name__": "generated"}
    code = prelude + "\ndef _f():\n" + textwrap.indent(body, "    ") + "\n"
    try:
        # this test's own code
        exec(compile(code, "<test case>", "exec", dont_inherit=True), namespace)
        return ("ok", namespace["_f"]())
    except Exception as exc:
        return ("raise", type(exc).__name__)


def our_answer(tmp_path: Path, prelude: str, lines: list[str]) -> tuple[str, Any]:
    """The evaluator's answer: ("ok", value), ("raise", kind) or ("unknown", reason)."""
    it, cls = load(tmp_path, cm("f", *lines), header=HEADER + "\n" + prelude)
    try:
        return ("ok", ask(it, cls, "f"))
    except Raised as exc:
        return ("raise", exc.kind)
    except Unknown as exc:
        return ("unknown", str(exc))


def case_key(prelude: str, body: str) -> str:
    """A case's name in known_differences.toml: a digest of its code."""
    return hashlib.sha1(f"{prelude}\0{body}".encode()).hexdigest()[:10]


def _typed(value: Any) -> Any:
    """A value with the type of each part (1 and True, 1 and 1.0 differ), as plain data."""
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_typed(v) for v in value])
    if isinstance(value, dict):
        return ("dict", [(_typed(k), _typed(v)) for k, v in value.items()])
    if isinstance(value, (str, int, float, bool, type(None))):
        return (type(value).__name__, value)
    return ("repr", repr(value))


def same_answer(ours: tuple[str, Any], python: tuple[str, Any], typed: Any) -> bool:
    """Both answers are the same outcome: equal values as ``typed`` sees them, or the
    same exception raised."""
    if ours[0] != python[0]:
        return False
    return bool(typed(ours[1]) == typed(python[1])) if ours[0] == "ok" else ours[1] == python[1]


def _reason(unknown: str) -> str:
    """An unknown's reason without its place (``(path:line)``)."""
    return re.sub(r" \([^()]*:\d+\)$", "", unknown)


def check(ours: tuple[str, Any], python: tuple[str, Any], expect_unknown: str = "") -> None:
    """Ours is Python's answer, or (listed with its reason) unknown for that reason."""
    if expect_unknown:
        assert ours[0] == "unknown", (
            f"listed as unknown in known_differences.toml, now answers {ours!r} "
            f"(Python: {python!r}); take it off the list if that is Python's answer"
        )
        assert _reason(ours[1]) == expect_unknown, (
            f"unknown for another reason than listed: {ours[1]!r} (Python: {python!r})"
        )
        return
    assert ours[0] != "unknown", (
        f"the evaluator gave up ({ours[1]}); Python answers {python!r}. "
        "If that is intended, list the case in known_differences.toml"
    )
    if ours[0] == python[0] == "ok":
        assert _typed(ours[1]) == _typed(python[1]), (ours, python)
    assert ours[0] == python[0] and (ours[0] == "ok" or ours[1] == python[1]), (ours, python)


def as_python(tmp_path: Path, prelude: str, body: str, expect_unknown: str = "") -> None:
    """:func:`check` the evaluator's answer to ``body`` after ``prelude`` against CPython's."""
    ours = our_answer(tmp_path, prelude, body.split("\n"))
    check(ours, python_answer(prelude, body), expect_unknown)


def differential(suite: str, tmp_path: Path, prelude: str, body: str) -> None:
    """Compare one case of ``suite`` with CPython, as its entry in the list says."""
    listed = known("pyeval-unknown", suite)
    as_python(tmp_path, prelude, body, listed.get(case_key(prelude, body), ""))


def listed_keys_exist(suite: str, cases: list[tuple[str, str]]) -> None:
    """Every key listed for ``suite`` names a case of it (an edited case drops its entry)."""
    keys = {case_key(p, b) for p, b in cases}
    stale = set(known("pyeval-unknown", suite)) - keys
    assert not stale, f"known_differences.toml [pyeval-unknown.{suite}] lists no case: {stale}"
