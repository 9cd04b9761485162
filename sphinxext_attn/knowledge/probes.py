"""Feature probes of installed dependencies: ``inspect.signature(f).parameters``.

vLLM looks for a keyword of a dependency's function before it uses it (a
newer FlashInfer takes ``ckv_scale_arr``). The reference machine installs the
release's pinned dependencies, which the release's probes were written
against, so a probe of an installed package finds what it looks for: the
parameter is there and of the kind asked. ``--assume features.PACKAGE=false``
says the installed version lacks it. The fact is noted wherever it is read.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval import MISSING, External, Value

if TYPE_CHECKING:
    from sphinxext_attn.knowledge.machine import Machine
    from sphinxext_attn.pyeval import Interpreter

#: ``inspect.signature(<probed>).parameters`` and one parameter's ``.kind``
_PARAMETERS = re.compile(r"inspect\.signature\((?P<probed>[\w.]+)\)\.parameters")
_KIND = re.compile(_PARAMETERS.pattern + r"\['\w+'\]\.kind")


def signature(
    machine: Machine, interp: Interpreter, args: list[Value], kwargs: dict[str, Value]
) -> Value:
    """``inspect.signature(f)`` of a function of an installed package outside the
    tree: a name standing for it; MISSING for anything else."""
    if len(args) != 1 or kwargs or not isinstance(args[0], External):
        return MISSING
    probed = args[0].qualname
    if not re.fullmatch(r"[\w.]+", probed) or not machine.installed(interp, probed):
        return MISSING
    return External(f"inspect.signature({probed})")


def compare(
    machine: Machine, interp: Interpreter, op: ast.cmpop, left: Value, right: Value
) -> bool | None:
    """``"name" in params`` and ``params["name"].kind is inspect.Parameter.KIND``
    of a probed signature: the installed package's feature fact; None for
    other comparisons."""
    if isinstance(op, ast.In | ast.NotIn) and isinstance(left, str):
        found = _feature(machine, interp, right, _PARAMETERS)
    elif isinstance(op, ast.Is | ast.IsNot):
        found = _feature(machine, interp, left, _KIND, right)
        if found is None:
            found = _feature(machine, interp, right, _KIND, left)
    else:
        return None
    if found is None:
        return None
    return found == isinstance(op, ast.In | ast.Is)


def _feature(
    machine: Machine,
    interp: Interpreter,
    value: Value,
    pattern: re.Pattern[str],
    kind: Value = None,
) -> bool | None:
    if not isinstance(value, External):
        return None
    match = pattern.fullmatch(value.qualname)
    if match is None:
        return None
    if pattern is _KIND and not (
        isinstance(kind, External) and kind.qualname.startswith("inspect.Parameter.")
    ):
        return None
    package = match["probed"].split(".")[0]
    return machine.fact_truth(interp, f"features.{package}", True)
