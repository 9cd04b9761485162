"""Every list vLLM's priority function can return, and the inputs that lead to it.

The function (``_get_backend_priorities`` in ``vllm/platforms/cuda.py``) is
evaluated, never pattern-matched. Each run records which parameters it read;
a run's answer holds for every assignment that agrees on those parameters, so
siblings are explored only where a parameter was read (the paths of a decision
tree, not the product of every domain). The values tried per parameter are the
ones its conditions can tell apart: both truth values of a flag, every GPU of
the grid, every KV cache dtype, and each side of every number it is compared
with.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from sphinxext_attn.knowledge.machine import capability_class
from sphinxext_attn.pyeval import (
    NODE,
    STEPS_PER_PRIORITY_RUN,
    EnumMember,
    Interpreter,
    PyFunction,
    Raised,
    Unknown,
)
from sphinxext_attn.runtime.questions import kv_cache_dtypes
from sphinxext_attn.vocab.names import CAPABILITIES, PRIORITY_FUNCTION
from sphinxext_attn.vocab.paths import CUDA_PLATFORM_MODULE

#: Runs of the function before the exploration gives up (a function that reads
#: every parameter at every branch has about a thousand paths on today's grids).
MAX_RUNS = 4000


@dataclass(frozen=True)
class Choice:
    """One value tried for a parameter; ``span`` orders numbers for the titles."""

    value: Any
    label: str
    #: for numbers: (low, high) of the integers this value stands for
    span: tuple[float, float] | None = None


@dataclass(frozen=True)
class Path:
    """One run: the parameters it read (name -> choice index) and its list."""

    read: tuple[tuple[str, int], ...]
    backends: tuple[str, ...]
    line: int


def _compared_numbers(func: ast.AST, name: str) -> list[int]:
    """Integer constants the parameter ``name`` is compared with in the body."""
    found: set[int] = set()
    for node in ast.walk(func):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        if not any(isinstance(o, ast.Name) and o.id == name for o in operands):
            continue
        for o in operands:
            if isinstance(o, ast.Constant) and type(o.value) is int:
                found.add(o.value)
    return sorted(found)


def _tested_as_flag(func: ast.AST, name: str) -> bool:
    """``if name``, ``not name`` or ``name and ...``: the parameter is a flag."""
    for node in ast.walk(func):
        tests = (
            [node.test]
            if isinstance(node, ast.If | ast.IfExp | ast.While)
            else node.values
            if isinstance(node, ast.BoolOp)
            else [node.operand]
            if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == name for t in tests):
            return True
    return False


def _number_choices(constants: list[int], optional: bool) -> list[Choice]:
    """A representative for each interval the constants cut the integers into."""
    out = [Choice(None, "unknown")] if optional else []
    low = float("-inf")
    for c in constants:
        if low <= c - 1:  # some integer lies below c and above the last constant
            label = f"< {c}" if low < c - 1 else f"{c - 1}"
            out.append(Choice(c - 1, label, (low, c - 1)))
        out.append(Choice(c, f"{c}", (c, c)))
        low = c + 1
    out.append(Choice(low if constants else 0, "other", (low, float("inf"))))
    return out


def parameter_choices(interp: Interpreter, func: PyFunction) -> dict[str, list[Choice]]:
    """The values each parameter is tried with, from its annotation and its uses."""
    args = func.node.args
    positional = [*args.posonlyargs, *args.args]
    with_defaults = positional[len(positional) - len(args.defaults) :]
    defaults: dict[str, ast.expr] = {
        a.arg: d for a, d in zip(with_defaults, args.defaults, strict=True)
    }
    out: dict[str, list[Choice]] = {}
    for arg in [*positional, *args.kwonlyargs]:
        note = ast.unparse(arg.annotation) if arg.annotation is not None else ""
        default = defaults.get(arg.arg)
        optional = "None" in note or (isinstance(default, ast.Constant) and default.value is None)
        if "DeviceCapability" in note or arg.arg == "device_capability":
            out[arg.arg] = [Choice(cap, f"{cap[0]}.{cap[1]}") for cap in CAPABILITIES]
        elif (
            note == "bool"
            or (isinstance(default, ast.Constant) and type(default.value) is bool)
            or (not note and _tested_as_flag(func.node, arg.arg))
        ):
            out[arg.arg] = [Choice(False, "false"), Choice(True, "true")]
        elif "CacheDType" in note or "dtype" in arg.arg:
            kinds = [Choice(None, "unset")] if optional else []
            out[arg.arg] = kinds + [Choice(k, k) for k in kv_cache_dtypes(interp)]
        elif "int" in note or (not note and _compared_numbers(func.node, arg.arg)):
            out[arg.arg] = _number_choices(_compared_numbers(func.node, arg.arg), optional)
        elif isinstance(default, ast.Constant):
            out[arg.arg] = [Choice(default.value, repr(default.value))]
        else:
            raise Unknown(f"parameter {arg.arg} of {func.name} has no known values", func.path)
    return out


def priority_function(interp: Interpreter) -> PyFunction | None:
    module = interp.module(CUDA_PLATFORM_MODULE)
    if module is None or not module.has(PRIORITY_FUNCTION):
        return None
    func = module.lookup(PRIORITY_FUNCTION, interp, NODE)
    return func if isinstance(func, PyFunction) else None


def _argument(interp: Interpreter, name: str, choice: Choice) -> Any:
    if isinstance(choice.value, tuple):  # a GPU: the tree's DeviceCapability
        return interp.call(capability_class(interp), list(choice.value), {}, NODE, "")
    return choice.value


def _run(
    interp: Interpreter, func: PyFunction, choices: dict[str, list[Choice]], pick: dict[str, int]
) -> tuple[list[str], tuple[str, ...], int]:
    """One evaluation: (parameters read in order, the list's member names, return line)."""
    reads: dict[str, None] = {}
    kwargs = {name: _argument(interp, name, choices[name][i]) for name, i in pick.items()}
    cap = choices.get("device_capability")
    capability = cap[pick["device_capability"]].value if cap else None
    if isinstance(func.node, ast.Lambda):
        raise Unknown(f"{func.name} is a lambda", func.path)
    where = (func.path, func.node.lineno)
    with interp.question(capability=capability, steps=STEPS_PER_PRIORITY_RUN, where=where) as q:
        returns = q.record_returns()
        # not through the call memo: which parameters the run read, in order, is wanted
        value = interp.run_function(func, [], kwargs, reads=reads)
        line = returns[-1].line if returns else 0
    items = list(interp.iterate(value, NODE, func.path))
    names = tuple(m.name for m in items if isinstance(m, EnumMember))
    if len(names) != len(items):
        raise Unknown(f"{func.name} returned something other than backends", func.path)
    read = [name for name in reads if name in choices]
    return read, names, line


def explore(interp: Interpreter, func: PyFunction) -> tuple[dict[str, list[Choice]], list[Path]]:
    """All paths through the function over the parameters' choices."""
    choices = parameter_choices(interp, func)
    paths: list[Path] = []
    runs = 0

    def visit(fixed: dict[str, int]) -> None:
        nonlocal runs
        runs += 1
        if runs > MAX_RUNS:
            raise Unknown(f"{func.name} has too many paths to list", func.path, func.node.lineno)
        pick = {name: fixed.get(name, 0) for name in choices}
        order, backends, line = _run(interp, func, choices, pick)
        paths.append(Path(tuple((n, pick[n]) for n in order), backends, line))
        prefix = dict(fixed)
        for name in order:
            if name not in fixed:
                for other in range(1, len(choices[name])):
                    visit({**prefix, name: other})
            prefix[name] = pick[name]

    try:
        visit({})
    except Raised as exc:
        raise Unknown(f"{func.name} raised {exc.kind}", func.path, func.node.lineno) from None
    return choices, paths


__all__ = [
    "Choice",
    "Path",
    "explore",
    "parameter_choices",
    "priority_function",
]
