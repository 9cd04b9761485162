"""The selector's records: a configuration, as vLLM's selection cases key it, and
the decision read from the answer of vLLM's ``get_valid_backends``.

Apart from :mod:`.decision` (which asks the question) so that the platform
rules and the settling of open facts, which the selector calls, can build
decisions without importing it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from sphinxext_attn.model.environment import MODEL_ATTN_TYPE
from sphinxext_attn.pyeval import Unknown
from sphinxext_attn.pyeval.statements import NOT_EVALUATED, NotEvaluated
from sphinxext_attn.pyeval.values import EnumMember, Instance

#: Option name (``select --kv-cache-dtype``, the directives' ``:kv-cache-dtype:``)
#: -> the :class:`Config` field it sets; the fields are vLLM's case keys.
OPTION_FIELDS: dict[str, str] = {
    "capability": "capability",
    "dtype": "dtype",
    "kv-cache-dtype": "kv_cache_dtype",
    "head-size": "head_size",
    "block-size": "block_size",
    "num-heads": "num_heads",
    "attn-type": "attn_type",
    "mla": "use_mla",
    "sparse": "use_sparse",
    "sink": "has_sink",
    "mm-prefix": "use_mm_prefix",
    "non-causal": "use_non_causal",
}
#: Options ``select`` and ``attention-backends-select`` take that the selector's
#: table has no control for (only other platforms' code reads them today).
LAYER_FIELDS: dict[str, str] = {"kv-connector": "use_kv_connector"}
#: Configuration fields an engine option sets instead (the directives' ``:option:``,
#: ``select --option``, a case's ``model_attn_type``): the selector's table has them
#: as settings where the platform's code reads them (ROCm)
ENGINE_FIELDS: dict[str, str] = {"model_attn_type": MODEL_ATTN_TYPE}


@dataclass
class Config:
    """One configuration, with the keys of vLLM's selection cases."""

    capability: str = "9.0"
    dtype: str = "bf16"
    kv_cache_dtype: str | None = "auto"
    head_size: int = 128
    block_size: int | None = None
    num_heads: int | None = None
    attn_type: str = "DECODER"
    use_mla: bool = False
    use_sparse: bool = False
    has_sink: bool = False
    use_mm_prefix: bool = False
    use_non_causal: bool = False
    #: a KV connector transfers the cache (ROCm keeps some backends out for it)
    use_kv_connector: bool = False
    #: the model's attention type (``ModelConfig.attn_type``); None: no engine config,
    #: as the docs build (set, the questions see it as ``--option`` would set it)
    model_attn_type: str | None = None
    #: the backend asked for (``--attention-backend``), by its registry name; None:
    #: vLLM chooses. Passed on where ``get_attn_backend_cls`` decides (XPU, CPU, TPU,
    #: plugins' platforms)
    selected_backend: str | None = None

    def key(self) -> tuple[Any, ...]:
        """The field values, in order (``dataclasses.astuple`` copies them deeply)."""
        return tuple(self.__dict__.values())

    @classmethod
    def from_case(cls, case: dict[str, Any]) -> Config:
        cfg = dict(case.get("config", {}))
        known = {k: v for k, v in cfg.items() if k in cls.__dataclass_fields__}
        requested = case.get("selected_backend")
        return cls(
            capability=str(case.get("capability", "9.0")),
            num_heads=case.get("num_heads"),
            **known,
            selected_backend=str(requested).upper() if requested else None,
        )

    def describe(self, gpu: str = "") -> str:
        """The configuration in one line, for people (``gpu``: how the platform names
        the GPU, e.g. ROCm gfx942, instead of its SM capability)."""
        flags = [
            word
            for word, on in (
                ("MLA", self.use_mla),
                ("sparse", self.use_sparse),
                ("sink", self.has_sink),
                ("multimodal prefix", self.use_mm_prefix),
                ("non-causal", self.use_non_causal),
                ("KV connector", self.use_kv_connector),
            )
            if on
        ]
        return ", ".join(
            [
                gpu or f"SM {self.capability}",
                self.dtype,
                f"KV cache {self.kv_cache_dtype or 'unset'}",
                f"head size {self.head_size}",
                f"block size {self.block_size or 'default'}",
                f"{self.num_heads or 'unknown'} heads",
                self.attn_type.lower().replace("_", "-"),
                *flags,
            ]
        )

    @property
    def capability_tuple(self) -> tuple[int, int]:
        major, _, minor = self.capability.partition(".")
        return int(major), int(minor or 0)


@dataclass
class Decision:
    """vLLM's answer: the list, the pick (or None: vLLM raises), the reasons."""

    selected: str | None
    priorities: list[str]
    rejected: dict[str, list[str]] = field(default_factory=dict)
    #: where a question could not be evaluated: backend -> reason (never guessed)
    unknown: dict[str, str] = field(default_factory=dict)
    error: str = ""
    #: backend -> file:line of each reason (parallel to ``rejected``; "" = not found)
    sources: dict[str, list[str]] = field(default_factory=dict)
    #: the machine facts the decision rests on (``NAME=VALUE``), see model.environment
    assumptions: list[str] = field(default_factory=list)
    #: a decision no static reading can settle: ``{"backend", "if"}`` in vLLM's order
    #: (``selected`` is then None)
    candidates: list[dict[str, Any]] = field(default_factory=list)
    #: backend -> what to ``--assume`` to settle it (a function of the tree)
    assumable: dict[str, str] = field(default_factory=dict)
    #: what vLLM raises when the platform's rules refuse the configuration (XPU, CPU)
    raised: str = ""
    #: the FlashAttention version the pick runs (None: it runs none, or not known)
    flash_attn_version: int | None = None
    #: the class the pick's name stands for where it is not vLLM's own (a plugin's:
    #: on TPU ``FLASH_ATTN`` is tpu-inference's Pallas backend)
    class_path: str = ""
    #: a backend asked for that the platform's code sets aside, in its words
    ignored_request: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "selected": self.selected,
            "priorities": self.priorities,
            "rejected": self.rejected,
        }
        if self.sources:
            data["sources"] = self.sources
        if self.unknown:
            data["unknown"] = self.unknown
        if self.error:
            data["error"] = self.error
        if self.raised:
            data["raised"] = self.raised
        data["assumptions"] = self.assumptions
        if self.candidates:
            data["candidates"] = self.candidates
        if self.class_path:
            data["class_path"] = self.class_path
        if self.ignored_request:
            data["ignored_request"] = self.ignored_request
        return data

    def make_conditional(self) -> None:
        """A pick behind backends not evaluated holds only if none of them qualifies:
        say so (candidates, each with its condition) instead of guessing."""
        undecided = self.undecided()
        if not undecided:
            return
        for name in undecided:
            why = self.unknown[name]
            fact = self.assumable.get(name)
            hint = f"; settle it with --assume {fact}=true|false" if fact else ""
            self.candidates.append({"backend": name, "if": f"{name} qualifies ({why}){hint}"})
        if self.selected is not None:
            others = " nor ".join(undecided)
            self.candidates.append({"backend": self.selected, "if": f"neither {others} does"})
        self.selected = None

    def label(self, name: str) -> str:
        """What became of ``name`` in this decision, in one of five words."""
        if name == self.selected:
            return "selected"
        if name in self.unknown:
            return "not evaluated"
        if name in self.rejected:
            return "rejected"
        return "valid, lower priority" if self.selected else "valid (a candidate)"

    def undecided(self) -> list[str]:
        """Backends not evaluated that vLLM tries before the pick (all of them when
        nothing qualifies): the pick holds only if none of them qualifies."""
        end = (
            self.priorities.index(self.selected)
            if self.selected in self.priorities
            else len(self.priorities)
        )
        return [name for name in self.priorities[:end] if name in self.unknown]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Decision:
        return cls(
            data["selected"],
            list(data["priorities"]),
            dict(data["rejected"]),
            dict(data.get("unknown", {})),
            data.get("error", ""),
            dict(data.get("sources", {})),
            list(data.get("assumptions", [])),
            list(data.get("candidates", [])),
            raised=data.get("raised", ""),
            class_path=data.get("class_path", ""),
            ignored_request=data.get("ignored_request", ""),
        )


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
