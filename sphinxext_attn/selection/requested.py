"""A backend asked for (``--attention-backend NAME``): what the platform's own code
does with the request.

vLLM's selector hands the request to the platform's ``get_attn_backend_cls`` as
``selected_backend``; that method is evaluated here with the request set, the way
the automatic selection is asked with it None. So CUDA's check of the requested
class, ROCm's explicit branches and XPU's or CPU's rules (which may ignore the
request and return another backend) are the release's code, not rules of ours.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sphinxext_attn.knowledge.machine import machine_of
from sphinxext_attn.model.selection import Config, Decision
from sphinxext_attn.pyeval import NODE, NOT_EVALUATED, Interpreter, Raised, Unknown
from sphinxext_attn.selection.platform_rules import RULES_METHOD, backend_of_path, rule_arguments
from sphinxext_attn.selection.rule_requests import note_request, plugin_class_path
from sphinxext_attn.source.registry import read_registry
from sphinxext_attn.vocab.names import REGISTRY_ENUM
from sphinxext_attn.vocab.paths import REGISTRY_FILES, SELECTOR_MODULES

if TYPE_CHECKING:
    from sphinxext_attn.selection.decision import Selector

#: the end of a refusal message after its list (``... Reason: ['...']``, maybe a full stop)
_AFTER_LIST = re.compile(r"\]\s*\.?\s*$")


def backend_names(interp: Interpreter) -> list[str]:
    """The names a request may give: the members of the release's
    ``AttentionBackendEnum`` (those with no default class path too: vLLM then
    says they must be registered), each name its class body assigns."""
    enum = registry_enum(interp)
    names: list[str] = []
    for stmt in getattr(enum, "node", ast.Module(body=[], type_ignores=[])).body:
        targets = (
            stmt.targets
            if isinstance(stmt, ast.Assign)
            else [stmt.target]
            if isinstance(stmt, ast.AnnAssign) and stmt.value is not None
            else []
        )
        names += [t.id for t in targets if isinstance(t, ast.Name) and not t.id.startswith("_")]
    return names or [entry.name for entry in read_registry(interp.tree)]


def registry_enum(interp: Interpreter) -> Any:
    """The tree's ``AttentionBackendEnum`` (from the newest home of the registry)."""
    found = interp.first_defined(_registry_modules(), REGISTRY_ENUM)
    if found is None:
        raise Unknown("no backend registry in the tree")
    return found


def _registry_modules() -> list[str]:
    return [rel.removesuffix(".py").replace("/", ".") for rel in REGISTRY_FILES]


def check_backend(interp: Interpreter, name: str) -> None:
    """``name`` must be one of the release's backends (ValueError lists them)."""
    names = backend_names(interp)
    if name not in names:
        raise ValueError(
            f"{name!r} is not a backend of this release; choose from {', '.join(names)}"
        )


def decide_requested(selector: Selector, config: Config) -> Decision:
    """What ``get_attn_backend_cls`` does with ``config.selected_backend``: the class it
    returns (the one asked for, or another: the request ignored), what it raises
    (vLLM's message, and the reasons it lists, in its order), or not evaluated."""
    interp = selector.interp
    name = config.selected_backend or ""
    platform = machine_of(interp).platform(interp)
    method = interp.getattr(platform, RULES_METHOD, NODE, "")
    kwargs = rule_arguments(selector, config, method)
    kwargs["selected_backend"] = interp.getattr(registry_enum(interp), name, NODE, "")
    skipped_before = len(interp.skipped_checks)
    try:
        path = interp.call(method, [], kwargs, NODE, "")
    except Raised as exc:
        skipped = [_settle_hint(u) for u in interp.skipped_checks[skipped_before:]]
        return _refused(name, f"{exc.kind}: {exc.message}", skipped)
    if not isinstance(path, str):
        raise Unknown(f"{RULES_METHOD} answered no class path for {name}")
    used = backend_of_path(interp, path)
    decision = Decision(
        used, [used], requested=name, ignored=used != name, class_path=plugin_class_path(path)
    )
    note_request(decision, name, method)  # in the platform's own log line, where it has one
    if decision.ignored:  # the list vLLM walked instead, where it walks one
        automatic = selector.decide_automatically(replace(config, selected_backend=None))
        if automatic.selected == used:
            decision.priorities = automatic.priorities
            decision.rejected = automatic.rejected
    return decision


def _refused(name: str, message: str, skipped: list[str]) -> Decision:
    """A refusal: vLLM's message, and the reasons it lists. A message that is empty
    or lists a reason not evaluated is no definite answer (a check was skipped)."""
    reasons = reasons_in(message)
    kind = message.split(":", 1)[0]
    if reasons is None and not message.removeprefix(kind).strip(": "):
        why = skipped[0] if skipped else "the refusal's message was not evaluated"
        return _open(name, why)
    if reasons is not None and any(r.startswith(NOT_EVALUATED) for r in reasons):
        # a check not evaluated stands in vLLM's list: the message is vLLM's without it
        known = [r for r in reasons if not r.startswith(NOT_EVALUATED)]
        if not known:
            return _open(name, skipped[0] if skipped else reasons[0])
        message, reasons = message.replace(str(reasons), str(known)), known
    decision = Decision(None, [name], requested=name, refused=message)
    if reasons is not None:
        decision.rejected[name] = reasons
        if skipped:  # refused either way; a reason may be missing
            decision.unknown_reasons = skipped
    return decision


def _settle_hint(unknown: Unknown) -> str:
    """A check not evaluated, and the fact that settles it where one does."""
    fact = unknown.assumable
    return f"{unknown}; settle it with --assume {fact}=true|false" if fact else str(unknown)


def _open(name: str, why: str) -> Decision:
    """The check of ``name`` could not be evaluated: it is used if it passes."""
    decision = Decision(None, [name], requested=name, unknown={name: why})
    decision.candidates = [
        {"backend": name, "if": f"{name}'s check passes ({why})"},
        {"backend": "none", "if": f"{name}'s check refuses it"},
    ]
    return decision


def reasons_in(message: str) -> list[str] | None:
    """The list of reasons a refusal message ends with, as vLLM wrote them; None
    where it ends with none (or with a list that is not of texts). A reason may
    hold brackets itself (``pip install vllm[b12x]``): the list is the first
    ``[`` from which the rest of the message reads as one literal."""
    end = _AFTER_LIST.search(message)
    if end is None:
        return None
    text = message[: end.start() + 1]
    for start in (i for i, ch in enumerate(text) if ch == "["):
        try:
            value: Any = ast.literal_eval(text[start:])
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return None  # reasons are texts; another list is part of the message
        return value
    return None


# -- per-KV-kind requests (``attention_config.backend_per_kind``, 0.34) ---------------
#: the selector's function naming the KV-cache kind of a layer, and its map's option
KIND_FUNCTION = "get_attn_spec_kind"
PER_KIND_OPTION = "backend_per_kind"


def kind_function(interp: Interpreter) -> Any:
    """The release's ``get_attn_spec_kind`` (None: the release has no per-kind requests)."""
    return interp.first_defined(SELECTOR_MODULES, KIND_FUNCTION)


def kinds(interp: Interpreter) -> list[str]:
    """The kinds a per-kind request may name: the values of the enum the release's
    ``get_attn_spec_kind`` returns members of, read by evaluating it on one layer."""
    function = kind_function(interp)
    if function is None:
        return []
    member = interp.call(
        function,
        [],
        {"use_mla": False, "has_sliding_window": False, "attn_type": "decoder"},
        NODE,
        "",
    )
    enum = getattr(member, "cls", None)
    if enum is None:
        return []
    out: list[str] = []
    for stmt in enum.node.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant):
            out += [str(stmt.value.value) for t in stmt.targets if isinstance(t, ast.Name)]
    return out


def layer_kind(interp: Interpreter, config: Config, attn_type: Any) -> str:
    """The kind the release's code maps ``config``'s layer to (no sliding window: a
    plain configuration has none)."""
    function = kind_function(interp)
    member = interp.call(
        function,
        [],
        {"use_mla": config.use_mla, "has_sliding_window": False, "attn_type": attn_type},
        NODE,
        "",
    )
    return str(getattr(member, "value", member))


def resolve_per_kind(
    selector: Selector, config: Config, backend: str | None, per_kind: dict[str, str]
) -> tuple[str | None, str]:
    """The backend vLLM asks for ``config``'s layer: its kind's override where the
    map has one, else the global request; and the kind."""
    interp = selector.interp
    kind = layer_kind(interp, config, selector.attn_type_value(config.attn_type))
    return per_kind.get(kind, backend), kind
