"""A rule platform's checks: where ``get_attn_backend_cls`` asks a backend's own
``validate_configuration`` (XPU's MLA branch: FlashAttention MLA where it is
valid, Triton MLA otherwise).

Such a check reads nearly every setting, so the outcome tabulated point by point
would depend on all of them together (76,800 points on XPU 0.33). Instead the
table treats each check as a yes/no setting of its own:

* the rules are evaluated on a machine where the check is answered by a stand-in
  (it accepts, or it refuses: :class:`StandInMachine`), so the outcome depends on
  a few settings and the checks' answers, and each rule is evaluated once per
  combination of those, not once per point;
* each check's reasons are tabulated like a CUDA backend's (a baseline, each
  setting on its own, the pairs that interact: :func:`.factor_reasons`), by
  evaluating the call as the method writes it (:func:`check_function`: its
  arguments, with the imports and assignments that come before it).

The widget (and :func:`.selector_predict.predict`) first recombines each check's
reasons at the configuration, then reads the outcome with the checks' answers.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sphinxext_attn.knowledge.machine import Machine, machine_of
from sphinxext_attn.model.environment import Environment
from sphinxext_attn.model.selection import Config
from sphinxext_attn.pyeval import (
    MISSING,
    NODE,
    NOT_EVALUATED,
    STEPS_PER_DECISION,
    Bound,
    EnumMember,
    Instance,
    PyClass,
    PyFunction,
    Raised,
    Unknown,
)
from sphinxext_attn.selection.platform_rules import RULES_METHOD, rule_arguments

if TYPE_CHECKING:
    from sphinxext_attn.pyeval import Interpreter
    from sphinxext_attn.selection.decision import Selector

#: the method by which a backend says whether it can run a configuration
CHECK_METHOD = "validate_configuration"
#: what the stand-in answers for a check that refuses (never shown: only its presence counts)
REFUSED = "refused (the selector's table asks the rules with this check refusing)"


class StandInMachine(Machine):
    """A machine where a backend's ``validate_configuration`` answers as ``answers``
    says (class name -> accepts; a class not named accepts), and that records the
    classes asked (``asked``, in order)."""

    def __init__(self, environment: Environment, answers: dict[str, bool] | None = None) -> None:
        super().__init__(environment)
        self.answers = dict(answers or {})
        self.asked: list[str] = []

    def function_hook(
        self, interp: Interpreter, func: PyFunction, args: list[Any], kwargs: dict[str, Any]
    ) -> Any:
        if func.name == CHECK_METHOD and args and isinstance(args[0], PyClass):
            name = args[0].name
            if name not in self.asked:
                self.asked.append(name)
            return [] if self.answers.get(name, True) else [REFUSED]
        return super().function_hook(interp, func, args, kwargs)


def check_function(interp: Interpreter, platform: object, name: str) -> tuple[PyFunction, object]:
    """The check of class ``name`` as ``get_attn_backend_cls`` writes it: a function
    with the method's parameters whose body is the imports and assignments before
    the call, then ``return`` the call; and the method's target (the platform)."""
    method = interp.getattr(platform, RULES_METHOD, NODE, "")
    if not isinstance(method, Bound):
        raise Unknown(f"{RULES_METHOD} is not a method")
    node = method.func.node
    if not isinstance(node, ast.FunctionDef):
        raise Unknown(f"{RULES_METHOD} is not a plain def", method.func.path)
    call = next(
        (
            c
            for c in ast.walk(node)
            if isinstance(c, ast.Call)
            and isinstance(c.func, ast.Attribute)
            and c.func.attr == CHECK_METHOD
            and isinstance(c.func.value, ast.Name)
            and c.func.value.id == name
        ),
        None,
    )
    before = _before(node.body, call) if call is not None else None
    if call is None or before is None:
        raise Unknown(f"no call {name}.{CHECK_METHOD}(...) found", method.func.path, node.lineno)
    body: list[ast.stmt] = [*before, ast.Return(value=call)]
    synthetic = ast.FunctionDef(
        name=node.name, args=node.args, body=body, decorator_list=[], returns=None
    )
    ast.copy_location(synthetic, node)
    ast.copy_location(body[-1], call)
    target = method.target
    if method.func.kind == "classmethod" and isinstance(target, Instance | EnumMember):
        target = target.cls
    return replace(method.func, node=synthetic, defaults={}), target


def _before(body: list[ast.stmt], call: ast.Call) -> list[ast.stmt] | None:
    """The imports and plain assignments on the way to ``call`` (None: not in ``body``)."""
    kept: list[ast.stmt] = []
    for stmt in body:
        if any(n is call for n in ast.walk(stmt)):
            for block in _blocks(stmt):
                if any(n is call for s in block for n in ast.walk(s)):
                    inner = _before(block, call)
                    return None if inner is None else kept + inner
            return kept  # the call is in this statement's own expressions
        if isinstance(stmt, ast.Import | ast.ImportFrom) or (
            isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets)
        ):
            kept.append(stmt)
    return None


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    blocks = [getattr(stmt, f, None) for f in ("body", "orelse", "finalbody")]
    blocks += [h.body for h in getattr(stmt, "handlers", [])]
    return [b for b in blocks if isinstance(b, list) and b]


class CheckAsker:
    """The reasons of each check at a configuration, on a machine without stand-ins."""

    def __init__(self, selector: Selector) -> None:
        self.selector = selector
        self._functions: dict[str, tuple[PyFunction, object]] = {}
        self._answers: dict[tuple[str, tuple[object, ...]], tuple[tuple[str, ...], dict[str, str]]]
        self._answers = {}

    def reasons(self, name: str, config: Config) -> tuple[tuple[str, ...], dict[str, str]]:
        """Why the check of class ``name`` refuses ``config`` (empty: it accepts), and
        the machine facts the question read."""
        key = (name, config.key())
        if key not in self._answers:
            self._answers[key] = self._ask(name, config)
        return self._answers[key]

    def _ask(self, name: str, config: Config) -> tuple[tuple[str, ...], dict[str, str]]:
        interp = self.selector.interp
        facts: dict[str, str] = {}
        try:
            with (
                self.selector.model(config),
                interp.question(capability=config.capability_tuple, steps=STEPS_PER_DECISION) as q,
            ):
                q.capability = self.selector.gpu(config)
                if name not in self._functions:
                    platform = machine_of(interp).platform(interp)
                    self._functions[name] = check_function(interp, platform, name)
                func, target = self._functions[name]
                method = interp.getattr(target, RULES_METHOD, NODE, "")
                kwargs = rule_arguments(self.selector, config, method)
                found = interp.run_function(func, [target], kwargs)
                facts.update(q.facts)
        except Unknown as exc:
            return (f"{NOT_EVALUATED}{exc}",), facts
        except Raised as exc:
            return (f"{NOT_EVALUATED}{exc.kind}: {exc.message}",), facts
        if found is MISSING or not isinstance(found, list | tuple):
            return (f"{NOT_EVALUATED}{CHECK_METHOD} answered no list",), facts
        return tuple(str(r) for r in found), facts


__all__ = ["CHECK_METHOD", "CheckAsker", "StandInMachine", "check_function"]
