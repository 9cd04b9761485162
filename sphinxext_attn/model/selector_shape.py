"""The shape of the selector's table: its dimensions, their values, the kinds of
its entries and the records it is made of (:class:`SelectorData`).

Plain data in the model so that the page's renderer and the Sphinx glue read the
table's shape without importing the selector's builder. The records are the JSON
the page ships, key for key in the order they are written: typed dictionaries,
so the table serialises as it did.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict, final

from sphinxext_attn.model.environment import MODEL_ATTN_TYPES
from sphinxext_attn.model.json_value import JsonObject
from sphinxext_attn.vocab.names import ATTN_TYPES

FLAGS = ("use_mla", "use_sparse", "has_sink", "use_mm_prefix", "use_non_causal")
#: dimensions and their values (each of its :class:`~.selection.Config` field's type,
#: which one dictionary cannot say: they are passed to ``Config`` by name)
Grid = dict[str, tuple[Any, ...]]
#: every dimension and its default values; the first value of each is not special
GRID: Grid = {
    "capability": ("8.0", "8.6", "8.9", "9.0", "10.0", "10.3", "12.0"),
    "dtype": ("fp16", "bf16", "fp32"),
    "kv_cache_dtype": ("auto", "fp8", "fp8_e4m3", "fp8_e5m2", "bfloat16"),
    "head_size": (64, 80, 96, 128, 192, 256, 512, 576),
    "block_size": (None, 16, 32, 64, 128),
    "num_heads": (None, 8, 16, 32, 128),
    "attn_type": ATTN_TYPES,
    **{flag: (False, True) for flag in FLAGS},
}
#: dimensions other than the capability, in the order the table indexes them
DIMS = tuple(d for d in GRID if d != "capability")
#: settings of the layer and the model that some platforms' code reads besides the
#: grid's (ROCm: a KV connector reorders its list, an encoder-decoder model keeps
#: ROCM_ATTN out); tried after the grid's on every platform but CUDA, and kept in a
#: table where an answer depends on them (:func:`keep_used`)
LAYER_GRID: Grid = {
    "use_kv_connector": (False, True),
    "model_attn_type": MODEL_ATTN_TYPES,
}
#: where a baseline is looked for first (MLA and sparsity decide most of the rest)
_FIRST = ("use_mla", "use_sparse", "head_size", "dtype", "kv_cache_dtype", "attn_type")
SEARCH_ORDER: tuple[str, ...] = _FIRST + tuple(d for d in DIMS if d not in _FIRST)


def query_value(value: object) -> str:
    """A grid value as the page's query string spells it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


#: the kind of a rule platform's table (``"kind"`` in the shipped data)
RULES = "rules"
#: a rule platform's outcome where its rules could not be evaluated (``select`` says so too)
UNKNOWN = "unknown"


#: a question of a table: (capability, "") for the priority list, (capability,
#: backend) for a backend's reasons (a rule platform's: a check's)
EntryKey = tuple[str, str]
#: the values of a pair (or triple) of settings, ``"i1,i2"``, -> ``[added, removed]``
Corrections = dict[str, list[list[int]]]


class PriorityTable(TypedDict):
    """The priority lists (interned) over the settings they depend on, in mixed
    radix over ``keys`` (a rule platform's: its outcomes)."""

    keys: list[int]
    table: list[int]


class BackendEntry(TypedDict):
    """A backend's reasons (interned), factored: those at a baseline, what each
    setting changes on its own, and the corrections of settings that act together."""

    base: list[int]
    reasons: list[int]
    #: dimension -> the reasons at each of its values (the rest at the baseline)
    single: dict[str, list[list[int]]]
    #: ``"d1,d2"`` (or three) -> corrections over their values
    joint: dict[str, Corrections]
    order: list[int]


#: one entry of a table: a priority table or a backend's
Entry = PriorityTable | BackendEntry


class CapEntry(TypedDict):
    """One capability's entries: the priority table and every listed backend's."""

    priorities: PriorityTable
    backends: dict[str, BackendEntry]
    #: what vLLM does with a request for each backend name the release has: the
    #: index of its answers in the table's ``requests`` (factored like reasons,
    #: :mod:`sphinxext_attn.selector.requests`)
    requests: NotRequired[dict[str, int]]


class CapOverride(TypedDict, total=False):
    """The entries of one capability a setting of the environment changes."""

    priorities: PriorityTable
    backends: dict[str, BackendEntry]


class State(TypedDict):
    """One setting of the environment controls: the facts read there, and the
    entries that differ from the page's default table."""

    reads: dict[str, str]
    caps: NotRequired[dict[str, CapOverride]]


class Control(TypedDict):
    """The values an environment control offers, and where it starts."""

    values: list[str]
    default: str


class Fact(Control):
    """An environment control as the page ships it."""

    name: str
    #: a guessed fact nobody set: the widget decides it both ways
    guessed: bool
    #: the docs' configuration sets it
    set: bool


@final  # (so that ``"variants" in shipped`` tells the two apart)
class SelectorData(TypedDict):
    """The selector's table of one platform (and GPU), as the page carries it."""

    #: :data:`RULES` for a rule platform's (first in its JSON)
    kind: NotRequired[str]
    #: ``(dimension, values)``, the capability first
    dims: list[tuple[str, list[str]]]
    defaults: list[str]
    reasons: list[str]
    #: priority lists (a rule platform's: outcomes ``[kind, text]``)
    lists: list[list[str]]
    caps: dict[str, CapEntry]
    #: a rule platform's checks, yes/no settings after the grid's
    checks: NotRequired[list[str]]
    facts_truncated: NotRequired[bool]
    facts: NotRequired[list[Fact]]
    states: NotRequired[dict[str, State]]
    same: NotRequired[list[str]]
    platform: NotRequired[str]
    arch: NotRequired[str]
    #: the answers to requests for a backend, each different one once (the page's
    #: ``:backend-control:``; indexed by each capability's ``requests``)
    requests: NotRequired[list[BackendEntry]]
    #: each backend's exact head-size rule (added by the page, see the directive)
    head_rules: NotRequired[JsonObject]


@final
class Variants(TypedDict):
    """What a page offering several tables carries: each by key, and the default's."""

    variants: dict[str, SelectorData]
    default: str


#: what a page's data is: one table, or several
Shipped = SelectorData | Variants
