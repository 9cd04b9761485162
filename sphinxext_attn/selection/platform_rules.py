"""Platforms without a priority list (XPU, CPU): their ``get_attn_backend_cls`` is an
ordered ``if``/``else``; the decision is the backend it returns, or what it raises."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sphinxext_attn.knowledge.devices import platform_class
from sphinxext_attn.knowledge.machine import machine_of
from sphinxext_attn.model.platform import Rule
from sphinxext_attn.model.records import Location
from sphinxext_attn.model.selection import Config, Decision
from sphinxext_attn.pyeval import NODE, Bound, Instance, Interpreter, Raised, Unknown
from sphinxext_attn.selection.answers import param_names
from sphinxext_attn.selection.plugin_checks import readable_class
from sphinxext_attn.selection.rule_requests import (
    note_request,
    plugin_class_path,
    requested_member,
)
from sphinxext_attn.selection.settled import VALUES, conditional, sibling
from sphinxext_attn.source.registry import RegistryEntry, read_registry

if TYPE_CHECKING:
    from sphinxext_attn.selection.decision import Selector


#: the method of a platform without a priority list that decides (XPU, CPU)
RULES_METHOD = "get_attn_backend_cls"


def rule_arguments(selector: Selector, config: Config, method: Any) -> dict[str, Any]:
    """The arguments vLLM passes ``get_attn_backend_cls`` when it chooses for ``config``
    (no backend requested; ``num_heads`` where the release's signature has it)."""
    params = param_names(method.func.node) if isinstance(method, Bound) else []
    kwargs: dict[str, Any] = {"attn_selector_config": selector.build_config(config)}
    if "selected_backend" in params:
        kwargs["selected_backend"] = requested_member(selector.interp, config.selected_backend)
    if "num_heads" in params:
        kwargs["num_heads"] = config.num_heads
    return kwargs


def decide_by_rule(selector: Selector, config: Config, platform: Instance) -> Decision:
    """The backend a platform's ``get_attn_backend_cls`` returns with no backend
    requested (its ordered rules: XPU, CPU), or what it raises."""
    interp = selector.interp
    method = interp.getattr(platform, RULES_METHOD, NODE, "")
    kwargs = rule_arguments(selector, config, method)
    try:
        path = interp.call(method, [], kwargs, NODE, "")
    except Raised as exc:
        return Decision(None, [], raised=f"{exc.kind}: {exc.message}")
    except Unknown as exc:
        fact = exc.outermost or exc.assumable
        if not fact or fact in machine_of(interp).environment.assume:
            raise
        return _either_way(selector, config, fact)
    if not isinstance(path, str):
        raise Unknown("get_attn_backend_cls answered no class path")
    name = backend_of_path(interp, path)
    if plugin_class_path(path):  # a plugin's class: a warning where it cannot be read
        where = method.func.path if isinstance(method, Bound) else ""
        readable_class(interp, RegistryEntry(name, path, Location(where, 0)))
    decision = Decision(name, [name], class_path=plugin_class_path(path))
    note_request(decision, config.selected_backend, method)
    return decision


def _either_way(selector: Selector, config: Config, fact: str) -> Decision:
    """A decision that rests on a function's answer the trees cannot give (vllm-ascend's
    ``is_310p()``, from a SoC version written at build time): one per value, and
    conditional when they differ, never one of them presented as the answer."""
    answers = [(value, sibling(selector, fact, value).decide(config)) for value in VALUES]
    out = conditional(fact, answers)
    for value, decision in answers:
        for candidate in out.candidates:
            if not candidate["if"].endswith(f"--assume {fact}={value})"):
                continue
            if decision.class_path:
                candidate["class_path"] = decision.class_path
            if decision.raised:
                candidate["raised"] = decision.raised
    if len({c.get("class_path", "") for c in out.candidates}) > 1:
        out.selected = None  # one name (CUSTOM), two classes: the fact decides
    out.assumptions = [f"{fact}=true|false"]
    return out


def backend_of_path(interp: Interpreter, path: str) -> str:
    """The registry's name for a backend class path; for a class the registry does not
    list, the name its ``get_name()`` gives (else the class name)."""
    for entry in read_registry(interp.tree):
        if entry.class_path == path:
            return entry.name
    module_name, _, class_name = path.rpartition(".")
    module = interp.module(module_name)
    try:
        if module is not None and module.has(class_name):
            cls = module.lookup(class_name, interp, NODE)
            name = interp.call(interp.getattr(cls, "get_name", NODE, ""), [], {}, NODE, "")
            if isinstance(name, str) and name:
                return name
    except (Unknown, Raised):
        pass
    return class_name


REQUESTED = "selected_backend"


def read_rules(interp: Interpreter, platform: str) -> tuple[list[Rule], str]:
    """The automatic rules of the platform's ``get_attn_backend_cls``, in order, and the
    file they are read from. Branches only an explicit backend request reaches are left
    out (``selected_backend`` is None when vLLM chooses)."""
    cls = platform_class(interp, platform)
    method = next(
        (
            n
            for n in cls.node.body
            if isinstance(n, ast.FunctionDef) and n.name == "get_attn_backend_cls"
        ),
        None,
    )
    if method is None:
        raise Unknown(f"{cls.name} has no get_attn_backend_cls of its own", cls.path)
    rules: list[Rule] = []

    def settle(function: str) -> bool | None:
        """A function of the platform's module asked about the request (None)."""
        try:
            if not cls.module.has(function):
                return None
            found = cls.module.lookup(function, interp, NODE)
            answer = interp.call(found, [None], {}, NODE, cls.path)
        except (Unknown, Raised):
            return None
        return answer if isinstance(answer, bool) else None

    bound = {
        t.id: n.value
        for n in ast.walk(method)
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    _walk(interp, method.body, (), {}, rules, _Reading(settle, bound))
    return rules, cls.path


Settle = Callable[[str], "bool | None"]


@dataclass(frozen=True)
class _Reading:
    """What a walk through the method consults: the answer of a function asked about
    the request, and the method's own assignments (a dict of backends it indexes)."""

    settle: Settle
    bound: dict[str, ast.expr]


def _walk(
    interp: Interpreter,
    body: list[ast.stmt],
    conditions: tuple[str, ...],
    names: dict[str, str],
    rules: list[Rule],
    reading: _Reading,
) -> bool:
    """Rules of ``body`` under ``conditions``; True when every path through it ends."""
    for index, stmt in enumerate(body):
        if isinstance(stmt, ast.Assign):
            text = _text(stmt.value, names)
            for target in stmt.targets:  # ``a = b = value``: each name holds it
                if isinstance(target, ast.Name):
                    names[target.id] = text
                else:  # unpacked: the names no longer hold what they held
                    for node in ast.walk(target):
                        if isinstance(node, ast.Name):
                            names.pop(node.id, None)
            continue
        if isinstance(stmt, ast.If):
            test = _requested(stmt.test, reading.settle)
            if _assigns_request(stmt):  # a branch picks the backend, a later return gives it
                rest = body[index + 1 :]
                if isinstance(test, bool):
                    chosen = stmt.body if test else stmt.orelse
                    return _walk(interp, [*chosen, *rest], conditions, names, rules, reading)
                condition = _text(test, names)
                _walk(
                    interp, [*stmt.body, *rest], (*conditions, condition), dict(names), rules,
                    reading,
                )  # fmt: skip
                negated = f"not ({condition})"
                _walk(
                    interp, [*stmt.orelse, *rest], (*conditions, negated), dict(names), rules,
                    reading,
                )  # fmt: skip
                return True
            if test is False:
                if _walk(interp, stmt.orelse, conditions, names, rules, reading):
                    return True
                continue
            if test is True:
                if _walk(interp, stmt.body, conditions, names, rules, reading):
                    return True
                continue
            condition = _text(test, names)
            ends = _walk(interp, stmt.body, (*conditions, condition), dict(names), rules, reading)
            negated = f"not ({condition})"
            if stmt.orelse:
                other = _walk(
                    interp, stmt.orelse, (*conditions, negated), dict(names), rules, reading
                )
                if ends and other:
                    return True
            continue
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            table = _keyed_table(stmt.value, reading.bound)
            if table is not None:
                for condition, value in table:
                    path = _returned_path(value)
                    outcome = _outcome(interp, value, names)
                    rule = Rule(
                        (*conditions, condition), outcome, stmt.lineno, plugin_class_path(path)
                    )
                    rules.append(rule)
                key = ast.unparse(stmt.value)
                rules.append(
                    Rule((*conditions, "any other key"), f"raises KeyError ({key})", stmt.lineno)
                )
                return True
            path = _returned_path(stmt.value)
            outcome = _outcome(interp, stmt.value, names)
            rules.append(Rule(conditions, outcome, stmt.lineno, plugin_class_path(path)))
            return True
        if isinstance(stmt, ast.Raise) and stmt.exc is not None:
            rules.append(Rule(conditions, _raised(stmt.exc), stmt.lineno))
            return True
    return False


def _assigns_request(stmt: ast.If) -> bool:
    """Whether a branch of ``stmt`` sets ``selected_backend`` (TPU: the MLA branch
    picks ``FLASH_ATTN_MLA`` and the method's last line returns its path)."""
    return any(
        isinstance(n, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == REQUESTED for t in n.targets)
        for n in ast.walk(stmt)
    )


def _requested(test: ast.expr, settle: Settle | None = None) -> ast.expr | bool:
    """``test`` with ``selected_backend`` None: True/False where that settles it."""
    if isinstance(test, ast.Name) and test.id == REQUESTED:
        return False
    if (
        settle is not None
        and isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and any(isinstance(a, ast.Name) and a.id == REQUESTED for a in test.args)
    ):
        answer = settle(test.func.id)
        if answer is not None:
            return answer
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        sides = [test.left, test.comparators[0]]
        if any(isinstance(s, ast.Name) and s.id == REQUESTED for s in sides):
            other = sides[1] if isinstance(sides[0], ast.Name) else sides[0]
            has_none = isinstance(other, ast.Tuple | ast.List) and any(
                isinstance(e, ast.Constant) and e.value is None for e in other.elts
            )
            is_none = isinstance(other, ast.Constant) and other.value is None
            op = test.ops[0]
            if isinstance(op, ast.In | ast.Is | ast.Eq):
                return has_none or is_none
            if isinstance(op, ast.NotIn | ast.IsNot | ast.NotEq):
                return not (has_none or is_none)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _requested(test.operand, settle)
        return (not inner) if isinstance(inner, bool) else test
    if isinstance(test, ast.BoolOp):
        kept: list[ast.expr] = []
        for value in test.values:
            part = _requested(value, settle)
            if isinstance(part, bool):
                if part == isinstance(test.op, ast.Or):
                    return part  # True in an or, False in an and: settled
                continue
            kept.append(part)
        if not kept:
            return isinstance(test.op, ast.And)
        return kept[0] if len(kept) == 1 else ast.BoolOp(op=test.op, values=kept)
    return test


def _text(node: ast.expr, names: dict[str, str]) -> str:
    text = ast.unparse(node).replace("attn_selector_config.", "")
    for name, value in names.items():
        text = re.sub(rf"\b{re.escape(name)}\b", f"({value})", text)
    return text


def _outcome(interp: Interpreter, value: ast.expr, names: dict[str, str] | None = None) -> str:
    """``AttentionBackendEnum.X.get_path()`` -> X (also through ``selected_backend``
    set to it); a class path -> its backend name."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        inner = value.func.value
        if isinstance(inner, ast.Attribute) and value.func.attr == "get_path":
            return inner.attr
        picked = (names or {}).get(inner.id, "") if isinstance(inner, ast.Name) else ""
        if value.func.attr == "get_path" and re.fullmatch(r"\(?[\w.]+\.(\w+)\)?", picked):
            return picked.strip("()").rpartition(".")[2]
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return backend_of_path(interp, value.value)
    return ast.unparse(value)


def _keyed_table(value: ast.expr, bound: dict[str, ast.expr]) -> list[tuple[str, ast.expr]] | None:
    """``table[(a, b)]`` where ``table`` is a dict literal bound just before, keyed by
    constants (vllm-ascend's backends by ``(use_mla, use_sparse, use_compress)``): a
    condition per key (``a == K0 and b == K1``) with its value."""
    if not (isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name)):
        return None
    literal = bound.get(value.value.id)
    if not isinstance(literal, ast.Dict):
        return None
    parts = value.slice.elts if isinstance(value.slice, ast.Tuple) else [value.slice]
    out: list[tuple[str, ast.expr]] = []
    for key, item in zip(literal.keys, literal.values, strict=True):
        elts = key.elts if isinstance(key, ast.Tuple) else [key] if key is not None else []
        if len(elts) != len(parts) or not all(isinstance(e, ast.Constant) for e in elts):
            return None
        words = [f"{_text(p, {})} == {ast.unparse(e)}" for p, e in zip(parts, elts, strict=True)]
        out.append((" and ".join(words), item))
    return out


def _returned_path(value: ast.expr) -> str:
    return value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else ""


def _raised(exc: ast.expr) -> str:
    kind = ast.unparse(exc.func if isinstance(exc, ast.Call) else exc)
    message = ""
    if isinstance(exc, ast.Call) and exc.args:
        first = exc.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            message = first.value
        elif isinstance(first, ast.JoinedStr):
            message = "".join(
                str(v.value) if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
                for v in first.values
                if isinstance(v, ast.Constant | ast.FormattedValue)
            )
    return f"raises {kind}: {message}" if message else f"raises {kind}"
