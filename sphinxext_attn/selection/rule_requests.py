"""A backend asked for (``--attention-backend``) on a platform whose
``get_attn_backend_cls`` decides: the registry member vLLM passes it, and, where the
platform's code sets the request aside, the log line it says so with."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from sphinxext_attn.pyeval import (
    LOG_METHODS,
    LOGGER_NAMES,
    Bound,
    EnumMember,
    Interpreter,
    Unknown,
)
from sphinxext_attn.source.layout import in_package
from sphinxext_attn.vocab.names import REGISTRY_ENUM
from sphinxext_attn.vocab.paths import REGISTRY_FILES

if TYPE_CHECKING:
    from sphinxext_attn.model.selection import Decision


def requested_member(interp: Interpreter, name: str | None) -> Any:
    """``AttentionBackendEnum.NAME`` of the tree (None when nothing is asked for)."""
    if not name:
        return None
    enum = _enum(interp)
    member = interp.class_own_attr(enum, name) if enum is not None else None
    if not isinstance(member, EnumMember):
        raise Unknown(f"{name} is no {REGISTRY_ENUM} member of the tree")
    return member


def _enum(interp: Interpreter) -> Any:
    return interp.first_defined(
        [rel.removesuffix(".py").replace("/", ".") for rel in REGISTRY_FILES], REGISTRY_ENUM
    )


def plugin_class_path(path: str) -> str:
    """``path`` when the class is not vLLM's own (a plugin's), else ""."""
    return "" if in_package(path.rpartition(".")[0]) else path


def note_request(decision: Decision, requested: str | None, method: Any) -> None:
    """Say so where the platform answered another backend than the one asked for,
    in the words of the method's own log line about it."""
    if not requested or decision.selected in (None, requested) or decision.raised:
        return
    said = _log_line(method, decision.selected or "", requested)
    where = f"{method.func.path}:{said[1]}" if said and isinstance(method, Bound) else ""
    text = f"{requested} asked for: ignored on this platform, {decision.selected} used"
    decision.ignored_request = f"{text} ({where}: {said[0]})" if said else text


def _log_line(method: Any, selected: str, requested: str) -> tuple[str, int] | None:
    """The first log call of ``method`` whose message names ``selected``, with
    ``%s`` filled with the request."""
    node = method.func.node if isinstance(method, Bound) else None
    if node is None:
        return None
    for call in ast.walk(node):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
            continue
        owner = call.func.value
        if not (isinstance(owner, ast.Name) and owner.id in LOGGER_NAMES):
            continue
        first = call.args[0] if call.args else None
        if call.func.attr in LOG_METHODS and isinstance(first, ast.Constant):
            text = first.value
            if isinstance(text, str) and selected in text:
                return text.replace("%s", f"{REGISTRY_ENUM}.{requested}", 1), call.lineno
    return None
