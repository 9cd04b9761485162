"""The selection's records: one configuration, as vLLM's selection cases key it,
and vLLM's answer for it. Plain data: the evaluator reads them in :mod:`..selection`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from sphinxext_attn.model.environment import MODEL_ATTN_TYPE
from sphinxext_attn.model.json_value import JsonObject, as_json

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
#: Options that do not apply beside a whole model (the model decides them, or no
#: layer reads them); the others set a layer field over what the model implies
NOT_WITH_MODEL = ("block-size", "non-causal", "kv-connector")
MODEL_FIELDS: dict[str, str] = {
    name: field
    for name, field in OPTION_FIELDS.items()
    if name != "capability" and name not in NOT_WITH_MODEL
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
    #: the backend asked for (``--attention-backend``); None: vLLM chooses
    selected_backend: str | None = None
    #: the model's attention type (``ModelConfig.attn_type``); None: no engine config,
    #: as the docs build (set, the questions see it as ``--option`` would set it)
    model_attn_type: str | None = None

    def key(self) -> tuple[object, ...]:
        """The field values, in order (``dataclasses.astuple`` copies them deeply)."""
        return tuple(self.__dict__.values())

    @classmethod
    def from_case(cls, case: dict[str, Any]) -> Config:
        cfg = dict(case.get("config", {}))
        known = {k: v for k, v in cfg.items() if k in cls.__dataclass_fields__}
        return cls(
            capability=str(case.get("capability", "9.0")),
            num_heads=case.get("num_heads"),
            selected_backend=case.get("selected_backend"),
            **known,
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


#: a backend a decision no static reading settles may pick, and on what condition
#: (``priorities``: the list it is picked from there; ``class_path``, ``raised``:
#: the class a plugin's name stands for, what vLLM raises instead)
Candidate = TypedDict(
    "Candidate",
    {
        "backend": str,
        "if": str,
        "priorities": NotRequired[list[str]],
        "class_path": NotRequired[str],
        "raised": NotRequired[str],
    },
)


class Alternative(TypedDict):
    """One smallest change of the facts a decision read (``--env``, ``--assume``,
    ``--option`` values) and the backend vLLM then uses (None: it raises)."""

    env: dict[str, str]
    assume: dict[str, str]
    option: dict[str, str]
    selected: str | None


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
    candidates: list[Candidate] = field(default_factory=list)
    #: backend -> what to ``--assume`` to settle it (a function of the tree)
    assumable: dict[str, str] = field(default_factory=dict)
    #: what vLLM raises when the platform's rules refuse the configuration (XPU, CPU)
    raised: str = ""
    #: the FlashAttention version the pick runs (None: it runs none, or not known)
    flash_attn_version: int | None = None
    #: where the implementation passes that version to the kernel ("": the helper's answer)
    flash_attn_source: str = ""
    #: the backend asked for (None: vLLM chose); ``ignored``: vLLM used another
    requested: str | None = None
    ignored: bool = False
    #: what vLLM raises refusing the request (its message, JSON ``error``)
    refused: str = ""
    #: checks not evaluated beside a refusal (a reason of vLLM's may be missing)
    unknown_reasons: list[str] = field(default_factory=list)
    #: the class the pick's name stands for where it is not vLLM's own (a plugin's:
    #: on TPU ``FLASH_ATTN`` is tpu-inference's Pallas backend)
    class_path: str = ""
    #: a backend asked for that the platform's code sets aside, in its words
    ignored_request: str = ""

    def to_json(self) -> JsonObject:
        data: JsonObject = {
            "selected": self.selected,
            "priorities": self.priorities,
            "rejected": self.rejected,
        }
        if self.sources:
            data["sources"] = self.sources
        if self.unknown:
            data["unknown"] = self.unknown
        if self.error or self.refused:
            data["error"] = self.error or self.refused
        if self.requested is not None:
            data["selected_backend"] = self.requested
            data["selected_backend_ignored"] = self.ignored
            if self.refused:
                data["refused"] = True
            if self.unknown_reasons:
                data["unknown_reasons"] = self.unknown_reasons
        if self.raised:
            data["raised"] = self.raised
        data["assumptions"] = self.assumptions
        if self.candidates:
            data["candidates"] = as_json(self.candidates)
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
            "" if data.get("refused") else data.get("error", ""),
            dict(data.get("sources", {})),
            list(data.get("assumptions", [])),
            list(data.get("candidates", [])),
            raised=data.get("raised", ""),
            requested=data.get("selected_backend"),
            ignored=bool(data.get("selected_backend_ignored")),
            refused=data.get("error", "") if data.get("refused") else "",
            unknown_reasons=list(data.get("unknown_reasons", [])),
            class_path=data.get("class_path", ""),
            ignored_request=data.get("ignored_request", ""),
        )


def request_summary(decision: Decision) -> list[str]:
    """What vLLM does with the backend asked for, for people: one line (a refusal
    adds its reasons, one a line)."""
    asked = decision.requested
    if decision.refused:
        reasons = decision.rejected.get(asked or "", [])
        out = [f"requested: {asked}: vLLM refuses it" + (":" if reasons else "")]
        out += [f"  - {reason}" for reason in reasons]
        out += [f"  (not evaluated: {why})" for why in decision.unknown_reasons]
        return out
    if decision.ignored:
        line = f"requested: {asked}: vLLM ignores the request and uses {decision.selected}"
        return [line, f"  - {decision.ignored_request}"] if decision.ignored_request else [line]
    if decision.selected == asked:
        return [f"requested: {asked}: vLLM uses it"]
    return [f"requested: {asked}: not settled (see the candidates)"]
