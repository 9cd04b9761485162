"""Typed records produced by the analysis and consumed by every renderer.

Records carry facts (booleans, tuples of strings); the cell texts the seed
writes are derived here once so markdown, docutils and JSON agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

from sphinxext_attn.model.columns import COLUMN, FEATURE_COLUMNS, RUNTIME_COLUMNS, UNKNOWN_MARK
from sphinxext_attn.model.json_value import JsonObject

if TYPE_CHECKING:
    from sphinxext_attn.model.pagetext import PageText
    from sphinxext_attn.model.platform import PlatformSelection


class CudagraphAnswer(TypedDict, total=False):
    """A metadata builder's CUDA-graph support: ``level`` (the enum member's name) or
    ``unknown`` (why not), and ``assumptions`` (machine facts it rests on,
    ``NAME=VALUE``) where there are any."""

    level: str
    unknown: str
    assumptions: list[str]


#: The seed's standard-table columns (``Version`` only when a variant exists).
STANDARD_COLUMNS: tuple[str, ...] = (
    "Backend",
    "Version",
    "Dtypes",
    "KV Dtypes",
    "Block Sizes",
    "Head Sizes",
    "Sink",
    "MM Prefix",
    "Attention Types",
    "Compute Cap.",
)

#: The seed's MLA decode columns.
MLA_COLUMNS: tuple[str, ...] = (
    "Backend",
    "Dtypes",
    "KV Dtypes",
    "Block Sizes",
    "Head Sizes",
    "Sink",
    "Sparse",
    "MM Prefix",
    "Attention Types",
    "Compute Cap.",
)

#: Columns of the MLA prefill table (``Dtypes`` is an extra of newer vLLM).
PREFILL_COLUMNS: tuple[str, ...] = (
    "Backend",
    "Description",
    "Dtypes",
    "Compute Cap.",
    "Enable",
    "Disable",
    "Notes",
)
REGISTRY_PREFILL_COLUMNS: tuple[str, ...] = (
    "Backend",
    "Description",
    "Dtypes",
    "Compute Cap.",
    "Notes",
)
SEED_PREFILL_COLUMNS: tuple[str, ...] = (
    "Backend",
    "Description",
    "Compute Cap.",
    "Enable",
    "Disable",
    "Notes",
)

#: Feature tables a backend can belong to, in page order.
TABLES: tuple[str, ...] = ("standard", "minimax", "mla", "dsv4")
#: Tables rendered with the MLA columns.
MLA_TABLES: frozenset[str] = frozenset({"mla", "dsv4"})
CATEGORIES: tuple[str, ...] = ("standard", "mla")
ARCHES: tuple[str, ...] = ("sm100", "default")


@dataclass(frozen=True)
class Location:
    """Where a fact was read: a path relative to the tree root and a 1-based line."""

    path: str
    line: int = 0

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path


@dataclass(frozen=True)
class Diagnostic:
    """A problem found in the analysed tree; becomes a Sphinx warning or a stderr line."""

    message: str
    location: Location | None = None
    subtype: str = "source"
    #: a problem of the unmodified release that no docs author can fix (a registry
    #: entry the release cannot back statically); its message starts "NAME: "
    release: bool = False
    #: the registry entry a class-level problem is about ("" when none)
    backend: str = ""

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location else ""
        return f"{where}{self.message}"


@dataclass(frozen=True)
class BackendFeatures:
    """One row of a feature table: a registered backend or one of its variants."""

    name: str
    class_path: str
    version: str = ""
    #: order of a variant among rows of the same backend (FA2 before FA3)
    variant_order: int = 0
    dtypes: tuple[str, ...] = ("fp16", "bf16")
    kv_cache_dtypes: tuple[str, ...] = ("auto",)
    block_sizes: tuple[str, ...] = ()
    head_sizes: tuple[str, ...] = ()
    attn_types: str = "Decoder"
    compute_capability: str = "Any"
    is_mla: bool = False
    supports_sink: bool = False
    is_sparse: bool = False
    supports_mm_prefix: bool = False
    supports_non_causal: bool = False
    supports_dcp: bool = False
    #: a model-specific table the row belongs to instead ("dsv4", "minimax"), or ""
    family: str = ""
    #: column name -> where the value of that cell comes from
    sources: dict[str, Location] = field(default_factory=dict, compare=False, hash=False)
    #: runtime profile: column -> why the class's answer could not be evaluated
    unknown: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    #: runtime profile: head_sizes ("any", or ints and {"min", "max", "multiple_of"}
    #: rules whose union is the set), block_sizes, compute_capabilities ("any" or values)
    supports: JsonObject = field(default_factory=dict, compare=False, hash=False)
    #: runtime profile: ``supports``' shape, what vLLM's full check
    #: (``validate_configuration``) accepts for at least one configuration, and
    #: ``unknown`` (column -> why not evaluated) where it could not be found
    accepts: JsonObject = field(default_factory=dict, compare=False, hash=False)
    #: runtime profile: other capability flags of the interface (method -> answer)
    extras: JsonObject = field(default_factory=dict, compare=False, hash=False)
    #: runtime profile: column -> the machine facts its answer rests on (``NAME=VALUE``)
    assumptions: dict[str, tuple[str, ...]] = field(
        default_factory=dict, compare=False, hash=False
    )
    #: runtime profile: column -> a note on the cell (where what the column shows and
    #: what vLLM's selection asks differ: the declared KV dtypes and the check's)
    notes: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    #: a plugin's class: column -> the base class's answer, for the cells the class
    #: does not declare (shown "not declared"; see runtime.declared)
    undeclared: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    #: a plugin's class: the CUDA-graph support its metadata builder declares
    cudagraph_support: str = field(default="", compare=False, hash=False)
    #: runtime profile: the builder's CUDA-graph support (empty: not asked)
    cudagraph: CudagraphAnswer = field(
        default_factory=lambda: CudagraphAnswer(), compare=False, hash=False
    )

    @property
    def table(self) -> str:
        """``standard``, ``mla`` or a model family's own table (``dsv4``, ``minimax``)."""
        return self.family or ("mla" if self.is_mla else "standard")

    @property
    def sort_key(self) -> tuple[str, int]:
        """The seed sorts rows by name (code-point order); variants keep their own order."""
        return (self.name, self.variant_order)

    def cell(self, column: str) -> str:
        """The plain text of one cell, as the seed writes it (without markdown quoting)."""
        return cell_text(self, column)


def cell_text(row: BackendFeatures, column: str) -> str:
    """Plain cell text for ``column`` of ``row`` (:mod:`.columns` says how it is
    written); raises KeyError for unknown columns."""
    if column in row.unknown:
        return UNKNOWN_MARK
    if column in row.undeclared:
        return "not declared"
    return COLUMN[column].text(row)


@dataclass(frozen=True)
class PriorityList:
    """An ordered CUDA priority list for one category and architecture."""

    category: str  # "standard" | "mla"
    arch: str  # "sm100" | "default"
    backends: tuple[str, ...]
    source: Location | None = None
    #: runtime profile: the inputs that lead to this list, in words ("" = always)
    conditions: str = ""
    #: runtime profile: the GPU group's heading, and its capabilities
    arch_title: str = ""
    capabilities: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        """The seed's headings for its two lists; other architectures (``sm120``,
        which only the JSON carries) by their major version; evaluated lists add
        the conditions that lead to them."""
        if self.arch_title:
            return f"{self.arch_title}: {self.conditions}" if self.conditions else self.arch_title
        if self.arch == "sm100":
            return "Blackwell (SM 10.x)"
        if self.arch == "default":
            return "Ampere/Hopper (SM 8.x-9.x)"
        return f"SM {self.arch.removeprefix('sm')[:-1]}.x"


@dataclass(frozen=True)
class PrefillBackend:
    """One MLA prefill backend row."""

    name: str
    description: str
    compute_capability: str
    enable: str = ""
    disable: str = ""
    notes: str = ""
    dtypes: tuple[str, ...] = ()
    #: footnote mark written after the name (``‡`` on the first choice)
    marker: str = ""
    #: the name is a code name (registry member), shown as a literal
    literal: bool = False
    source: Location | None = None

    def cell(self, column: str) -> str:
        match column:
            case "Backend":
                return self.name + self.marker
            case "Description":
                return self.description
            case "Dtypes":
                return ", ".join(self.dtypes)
            case "Compute Cap.":
                return self.compute_capability
            case "Enable":
                return self.enable
            case "Disable":
                return self.disable
            case "Notes":
                return self.notes
        raise KeyError(column)


@dataclass(frozen=True)
class Footnote:
    """A footnote under the standard table, keyed by its marker (``†``, ``*``)."""

    marker: str
    text: str


@dataclass
class Analysis:
    """Everything the tables need, for one tree."""

    root: str
    version: str | None = None
    backends: list[BackendFeatures] = field(default_factory=list)
    priorities: list[PriorityList] = field(default_factory=list)
    mla_prefill: list[PrefillBackend] = field(default_factory=list)
    footnotes: list[Footnote] = field(default_factory=list)
    #: tree-relative paths of every file the analysis read (for note_dependency)
    files: list[str] = field(default_factory=list)
    #: tree-relative folders of every file looked for (for added-file detection)
    directories: list[str] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: "runtime" or "vllm-page": how the cells were read
    profile: str = "runtime"
    #: columns beyond the seed's that the release's own page shows (DCP, Non-Causal)
    page_columns: tuple[str, ...] = ()
    #: further capability columns the release's backend interface declares
    capability_columns: tuple[str, ...] = ()
    #: vllm-page profile: the layout and words of the release's generator (None: none)
    page_text: PageText | None = None
    #: profile ``platform:...``: another platform's selection (selection.platforms)
    platform: PlatformSelection | None = None

    @property
    def selection(self) -> PlatformSelection:
        """The other platform's selection of a platform analysis (its pages need it)."""
        if self.platform is None:
            raise ValueError("not a platform analysis: no platform selection")
        return self.platform

    def rows(self, table: str) -> list[BackendFeatures]:
        """Rows of one feature table in the seed's order."""
        return sorted((b for b in self.backends if b.table == table), key=lambda b: b.sort_key)

    def has_versions(self, table: str = "standard") -> bool:
        return any(b.version for b in self.backends if b.table == table)

    def feature_columns(self, table: str) -> tuple[str, ...]:
        """The columns of a feature table as the release's page has them: the seed's,
        ``Version`` only where a row has one, and the release's later columns."""
        base = MLA_COLUMNS if table in MLA_TABLES else STANDARD_COLUMNS
        if table not in MLA_TABLES and not self.has_versions(table):
            base = tuple(c for c in base if c != "Version")
        if not self.page_columns:
            return base
        return tuple(c for c in FEATURE_COLUMNS if c in base or c in self.page_columns)

    def column_choices(self) -> tuple[str, ...]:
        """Every column a ``:columns:`` option may name for this release."""
        runtime = RUNTIME_COLUMNS if self.profile == "runtime" else ()
        return (*FEATURE_COLUMNS, *self.capability_columns, *runtime)

    def legend_columns(self) -> tuple[str, ...]:
        """The columns the page's legend describes (the MLA table's, without Backend)."""
        return tuple(c for c in self.feature_columns("mla") if c != "Backend")

    def prefill_columns(self) -> tuple[str, ...]:
        """The seed's six prefill columns for selector-era rows; registry rows show
        dtypes instead of enable/disable switches."""
        if any(p.literal for p in self.mla_prefill):
            return REGISTRY_PREFILL_COLUMNS
        return SEED_PREFILL_COLUMNS

    def priority_lists(
        self, category: str, arches: Sequence[str] | None = None
    ) -> list[PriorityList]:
        """The lists of a category for ``arches``, in their order; None: every
        evaluated list, or the seed's two when the lists were read literally."""
        mine = [p for p in self.priorities if p.category == category]
        if arches is None:
            if any(p.arch_title for p in mine):
                return mine
            arches = ARCHES
        return [p for a in arches for p in mine if p.arch == a]

    def arches(self) -> list[str]:
        return list(dict.fromkeys(p.arch for p in self.priorities))

    def priority(self, category: str, arch: str) -> PriorityList | None:
        for p in self.priorities:
            if p.category == category and p.arch == arch:
                return p
        return None
