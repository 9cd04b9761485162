"""The selector's answer for a backend asked for (``select --backend NAME``).

vLLM hands the request to the platform's ``get_attn_backend_cls`` (CUDA checks
the requested class's ``validate_configuration``, ROCm walks its own branches,
XPU and CPU their rules, which may ignore the request and return another
backend, or raise). The table asks that very path, :meth:`Selector.decide` with
``selected_backend`` set (what ``select --backend`` answers), for every name the
release's ``AttentionBackendEnum`` has, and keeps each name's answer factored
like a backend's reasons (:func:`.factor_reasons`, checked by
:func:`.repair_entries`): the answer at a point is a short list of texts,

* none: vLLM uses the backend asked for;
* :data:`RAISES` and vLLM's message (:data:`SLOT` where its list of reasons
  stands), then the reasons in vLLM's order (a refusal);
* :data:`IGNORED` and the backend used, then :data:`NOTE` and the platform's
  own words about it (the request ignored);
* :data:`OPEN` and each candidate (:data:`CANDIDATE`), or :data:`UNKNOWN`
  (the code cannot settle it statically, as ``select`` says).

A refusal's reasons combine as the backends' do (each setting adds its own), so
the entries stay small; :func:`request_decision` reads one back into the
:class:`Decision` ``select`` makes (``attention_backends_selector_table.js``
does the same in the browser).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from sphinxext_attn.model.selection import Config, Decision
from sphinxext_attn.model.selector_shape import BackendEntry, CapEntry, SelectorData
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.selection.requested import backend_names
from sphinxext_attn.selector.builder import factor_reasons
from sphinxext_attn.selector.grid import (
    Grid,
    Interner,
    config_at,
    consistent_order,
    query_value,
)
from sphinxext_attn.selector.predict import backend_reasons
from sphinxext_attn.selector.repair import repair_entries

#: what starts a text of an answer that is not one of vLLM's reasons
MARK = "\x1f"
RAISES = MARK + "raises "
IGNORED = MARK + "ignored "
NOTE = MARK + "note "
OPEN = MARK + "open"
CANDIDATE = MARK + "if "
UNSETTLED = MARK + "unsettled "
UNKNOWN = MARK + "unknown "
#: a conditional answer ``select`` gives without its request line (the decision
#: settled over a fact nobody set, :mod:`sphinxext_attn.selection.settled`)
SETTLED = MARK + "settled"
#: after a reason vLLM lists again (its second, third... time in the list)
AGAIN = MARK + "again "
#: where vLLM's list of reasons stands in a refusal's message
SLOT = "{reasons}"
#: configurations each name's recombined answers are checked on while built
REQUEST_SAMPLE = 100


def tokens(decision: Decision, name: str) -> list[str]:
    """``decision`` (vLLM's answer to a request for ``name``) as the table keeps it."""
    if decision.refused:
        listed = decision.rejected.get(name, [])
        message = decision.refused
        reasons = _numbered(listed)
        if listed and message.endswith(str(listed)):  # vLLM's list ends its message
            message = message.removesuffix(str(listed)) + SLOT
        elif listed:  # a list not where vLLM writes it: kept as said, point by point
            reasons = []
        unsettled = [UNSETTLED + why for why in decision.unknown_reasons]
        return [RAISES + message, *reasons, *unsettled]
    if decision.candidates:
        head = OPEN if decision.requested is not None else SETTLED
        return [head] + [CANDIDATE + c["backend"] + MARK + c["if"] for c in decision.candidates]
    if decision.selected is None:
        why = decision.unknown.get("*") or decision.error or decision.raised or "no answer"
        return [UNKNOWN + why]
    if decision.ignored or decision.selected != name:
        return [IGNORED + decision.selected, NOTE + decision.ignored_request]
    return []


def _numbered(reasons: Sequence[str]) -> list[str]:
    """``reasons`` with each repeated one marked by its count (vLLM lists some twice)."""
    seen: dict[str, int] = {}
    out = []
    for reason in reasons:
        seen[reason] = seen.get(reason, 0) + 1
        out.append(reason if seen[reason] == 1 else f"{reason}{AGAIN}{seen[reason]}")
    return out


def request_decision(texts: Sequence[str], name: str) -> Decision:
    """The decision ``select --backend name`` reports, from the table's texts."""
    if not texts:
        return Decision(name, [name], requested=name)
    first = texts[0]
    if first.startswith(RAISES):
        reasons = [t.split(AGAIN)[0] for t in texts[1:] if not t.startswith(MARK)]
        message = first.removeprefix(RAISES).replace(SLOT, str(reasons))
        decision = Decision(None, [name], requested=name, refused=message)
        if reasons:
            decision.rejected[name] = reasons
        decision.unknown_reasons = [
            t.removeprefix(UNSETTLED) for t in texts if t.startswith(UNSETTLED)
        ]
        return decision
    if first.startswith(IGNORED):
        used = first.removeprefix(IGNORED)
        note = next((t.removeprefix(NOTE) for t in texts if t.startswith(NOTE)), "")
        return Decision(used, [used], requested=name, ignored=True, ignored_request=note)
    if first in (OPEN, SETTLED):
        decision = Decision(None, [name], requested=name if first == OPEN else None)
        for text in texts[1:]:
            backend, _, condition = text.removeprefix(CANDIDATE).partition(MARK)
            decision.candidates.append({"backend": backend, "if": condition})
        return decision
    return Decision(None, [], requested=name, error=first.removeprefix(UNKNOWN))


class RequestAsker:
    """Asks ``selector`` what vLLM does with each request over ``grid`` (the
    interface :func:`.repair_entries` asks through)."""

    def __init__(self, selector: Selector, grid: Grid, reasons: Interner[str]) -> None:
        self.selector = selector
        self.grid = grid
        self.reasons = reasons
        self.probes = 0
        #: every answer asked, by name and capability (their order of reasons)
        self.seen: dict[tuple[str, str], list[list[int]]] = {}
        self._asked: dict[tuple[str, str, tuple[int, ...]], list[int]] = {}

    def reasons_at(self, backend: str, cap: str, point: Sequence[int]) -> list[int]:
        key = (backend, cap, tuple(point))
        if key not in self._asked:
            self.probes += 1
            config = replace(config_at(self.grid, cap, point), selected_backend=backend)
            decision = self.selector.decide(config)
            self._asked[key] = [self.reasons(t) for t in tokens(decision, backend)]
            self.seen.setdefault((backend, cap), []).append(self._asked[key])
        return self._asked[key]

    def entries(self, cap: str, names: Sequence[str]) -> dict[str, BackendEntry]:
        """Each name's answers over the grid, factored."""
        return {name: self.entry(cap, name) for name in names}

    def entry(self, cap: str, name: str) -> BackendEntry:
        return factor_reasons(self.grid, lambda point: self.reasons_at(name, cap, point))


def add_requests(table: SelectorData, selector: Selector, grid: Grid) -> int:
    """Each capability's answers to a request for each name the release's registry
    has: ``table["requests"]`` holds each different entry once, and
    ``table["caps"][cap]["requests"][name]`` its index. How many questions it took."""
    names = backend_names(selector.interp)
    reasons: Interner[str] = Interner(table["reasons"])
    asker = RequestAsker(selector, grid, reasons)
    found = {cap: asker.entries(cap, names) for cap in table["caps"]}
    checked: dict[str, CapEntry] = {
        cap: {"priorities": data["priorities"], "backends": found[cap]}
        for cap, data in table["caps"].items()
    }
    repair_entries(asker, checked, names, REQUEST_SAMPLE)  # settings acting together
    for cap, entries_of_cap in found.items():  # vLLM's order, as every answer asked shows it
        for name, entry in entries_of_cap.items():
            order = consistent_order(asker.seen.get((name, cap), []))
            entry["order"] = order + [r for r in entry["order"] if r not in order]
    entries: Interner[str] = Interner()
    shipped: list[BackendEntry] = []
    for cap, data in table["caps"].items():
        data["requests"] = {}
        for name, entry in found[cap].items():
            index = entries(json.dumps(entry, sort_keys=True))
            if index == len(shipped):
                shipped.append(entry)
            data["requests"][name] = index
    table["reasons"] = reasons.items
    table["requests"] = shipped
    return asker.probes


def predict_request(table: SelectorData, config: Config, name: str) -> Decision | None:
    """What the table says vLLM does with a request for ``name`` at ``config``
    (None: not in the table)."""
    dims = [(dim, values) for dim, values in table["dims"] if dim != "capability"]
    cap = table["caps"].get(config.capability)
    index = cap.get("requests", {}).get(name) if cap is not None else None
    if index is None:
        return None
    entry = table["requests"][index]
    try:
        point = [values.index(query_value(getattr(config, dim))) for dim, values in dims]
    except ValueError:
        return None
    texts = [table["reasons"][r] for r in backend_reasons(entry, point)]
    return request_decision(texts, name)


__all__ = ["add_requests", "predict_request", "request_decision", "tokens"]
