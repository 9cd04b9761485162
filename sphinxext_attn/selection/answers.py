"""Reading vLLM's ``get_valid_backends`` answer (evaluated values) into a
:class:`~sphinxext_attn.model.selection.Decision`."""

from __future__ import annotations

import itertools
from typing import Any

from sphinxext_attn.model.selection import Decision
from sphinxext_attn.pyeval import NOT_EVALUATED, EnumMember, Instance, NotEvaluated, Unknown


def read_valid_backends(result: Any, where: str) -> Decision:
    """The decision in ``get_valid_backends``'s answer ``(valid, invalid)``, in
    either shape vLLM has used; :class:`Unknown` (at ``where``) for another."""
    try:
        return _read_result(result)
    except (ValueError, TypeError, AttributeError, KeyError, StopIteration):
        raise Unknown("get_valid_backends answered in a shape not understood", where) from None


def _read_result(result: Any) -> Decision:
    valid, invalid = result
    order: dict[int, str] = {}
    chosen: tuple[int, str] | None = None
    for candidate in valid:
        backend, priority = _candidate(candidate)
        order[priority] = backend.name
        if chosen is None or priority < chosen[0]:
            chosen = (priority, backend.name)
    rejected: dict[str, list[str]] = {}
    unknown: dict[str, str] = {}
    assumable: dict[str, str] = {}
    for backend, (priority, reasons) in with_priorities(invalid, order):
        order[priority] = backend.name
        items = list(reasons)
        texts = [str(r) for r in items]
        if len(items) == 1 and isinstance(items[0], NotEvaluated):
            unknown[backend.name] = str(items[0].unknown)
            if items[0].unknown.assumable:
                assumable[backend.name] = items[0].unknown.assumable
        elif len(texts) == 1 and texts[0].startswith(NOT_EVALUATED):
            unknown[backend.name] = texts[0].removeprefix(NOT_EVALUATED)
        else:
            rejected[backend.name] = texts
    priorities = [order[i] for i in sorted(order)]
    selected = chosen[1] if chosen else None
    return Decision(selected, priorities, rejected, unknown, assumable=assumable)


def with_priorities(invalid: Any, valid: dict[int, str]) -> list[tuple[Any, tuple[int, Any]]]:
    """``(backend, (priority, reasons))`` of each rejected backend. Before vLLM 0.18
    the reasons came without the priority: the rejected backends then take, in
    the order vLLM tried them, the places of the list the valid ones leave."""
    items = list(invalid.items())
    if all(isinstance(v, tuple) and len(v) == 2 and type(v[0]) is int for _, v in items):
        return items
    free = (i for i in itertools.count() if i not in valid)
    return [(backend, (next(free), reasons)) for backend, reasons in items]


def param_names(node: Any) -> list[str]:
    args = node.args
    return [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]


def _candidate(candidate: Any) -> tuple[EnumMember, int]:
    """A valid backend entry: ``_BackendCandidate(cls, backend, priority)`` or
    the older ``(backend, priority)`` tuple."""
    items = (
        candidate.items
        if isinstance(candidate, Instance) and candidate.items is not None
        else candidate
    )
    if isinstance(candidate, Instance) and "backend" in candidate.fields:
        return candidate.fields["backend"], candidate.fields["priority"]
    backend = next(i for i in items if isinstance(i, EnumMember))
    priority = next(i for i in items if isinstance(i, int) and not isinstance(i, bool))
    return backend, priority
