"""The interactive selector's table: vLLM's decision over a grid, factored to stay small.

The whole grid (seven capabilities, three dtypes, five KV cache dtypes, eight
head sizes, ...) has millions of configurations: too many to evaluate or to
ship. The decision is factored the way vLLM's code is written:

* the priority list depends only on the arguments of ``_get_backend_priorities``;
  of those, only the ones that change the list for a capability are kept
  (found by varying each from every point of the kept ones until none is
  added), and the list is tabulated over them;
* a backend's rejection reasons are, for one capability, the reasons of a
  baseline it accepts (where there is one) changed by each dimension on its
  own (``validate_configuration`` checks them one by one); where two
  dimensions together give something else than their union, the pair is
  kept as an exception, and so are the triples a check of the recombination
  on sampled configurations finds (:func:`.selector_repair.repair`).

:func:`~sphinxext_attn.selector.predict.predict` recombines them
(``attention_backends_selector.js`` does the same in the browser) and
:func:`~sphinxext_attn.selector.predict.agreement` measures the factorisation against full
:meth:`Selector.decide` answers.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.environment import DEFAULT_ROCM_ARCH, REFERENCE, Environment
from sphinxext_attn.model.plugin import Plugins
from sphinxext_attn.model.selector_shape import SelectorData, Shipped
from sphinxext_attn.pyeval import Interpreter, Raised, Unknown
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.selector.builder import TableBuilder
from sphinxext_attn.selector.grid import GRID
from sphinxext_attn.selector.parallel import Decided, decide_in_child
from sphinxext_attn.selector.predict import Decides, agreement, sample_configs
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.vocab.paths import CUDA_PLATFORM_FILE, module_file


@dataclass
class SelectorTable:
    """The table of one tree, how long it took and how well it agrees with decide()."""

    table: SelectorData | None
    seconds: float = 0.0
    #: (decisions equal, selected backend equal, compared) on a random sample
    agreement: tuple[int, int, int] = (0, 0, 0)
    #: why there is no table (the file named), else ""
    error: str = ""
    files: list[str] = field(default_factory=list)
    directories: list[str] = field(default_factory=list)
    #: every platform's (and ROCm GPU's) table, by ``variant_key``; the first is ``table``
    variants: dict[str, SelectorData] = field(default_factory=dict)
    #: the tables that could not be built (``key: why``)
    problems: list[str] = field(default_factory=list)
    #: the key of ``table`` among ``variants`` (the page's default)
    default: str = ""

    def shipped(self) -> Shipped | None:
        """What the page carries: the one table, or every table and the default's key."""
        if self.table is None or len(self.variants) <= 1:
            return self.table
        return {"variants": self.variants, "default": self.default}


def _default_table(
    tree: SourceTree, platforms: Sequence[str], environment: Environment, requests: bool
) -> tuple[SelectorData | None, dict[str, SelectorData], list[str], str, str]:
    """The page's default table (None when not evaluated), every table by key, the
    problems met, the default's key and the error that left no table."""
    # lazy: variants adds 8 ms to every Sphinx build, a rebuild that finds its tables
    # kept included (python -X importtime, median of 7)
    from sphinxext_attn.selector.variants import build_variants

    tables: dict[str, SelectorData] = {}
    problems: list[str] = []
    default = ""
    try:
        with Interpreter(tree).guarded():
            tables, problems = build_variants(tree, platforms, environment, requests)
        default = next(iter(tables), "")
        mine = f"rocm:{environment.arch or DEFAULT_ROCM_ARCH}"
        if platforms[0] == "rocm" and mine in tables:  # the machine's GPU (MI300X)
            default = mine
        first = tables.get(default)
        if first is None or not any(c["priorities"]["table"] for c in first["caps"].values()):
            raise Unknown("no priority list evaluated", CUDA_PLATFORM_FILE)
    except (Unknown, Raised, KeyError) as exc:
        where = getattr(exc, "where", "") or CUDA_PLATFORM_FILE
        if "/" not in where and where.startswith("vllm."):  # a module named, not a file
            where = module_file(where)
        reason = getattr(exc, "reason", None) or str(exc)
        return None, tables, problems, default, f"{where}: {reason}"
    return first, tables, problems, default, ""


def build_selector_table(
    root: str,
    sample: int = 200,
    platforms: Sequence[str] = ("cuda",),
    environment: Environment = REFERENCE,
    requests: bool = False,
    plugins: Plugins = (),
) -> SelectorTable:
    """The factored tables of the tree at ``root`` over :data:`GRID`, one per platform
    (and ROCm GPU) of ``platforms``, each with its environment controls (and with
    ``requests``, the answers to a backend asked for); the first is the page's
    default and is checked against full decisions on a sample; ``plugins``: those read
    with the tree."""
    started = time.perf_counter()
    tree = SourceTree(root, plugins=plugins)
    configs = sample_configs(GRID, sample, 1) if sample else []
    # CUDA's table is the page's default: its check is decided while it is built
    judged = Environment(environment.env, environment.options, environment.assume, "cuda", "")
    deciding = decide_in_child(tree, judged, configs) if platforms[0] == "cuda" else None
    table: SelectorData | None = None
    try:
        table, tables, problems, default, error = _default_table(
            tree, platforms, environment, requests
        )
        seconds = time.perf_counter() - started
    finally:  # the check's child: its decisions are wanted only with a table
        decided = None
        if deciding is not None and table is None:
            deciding.cancel()
        elif deciding is not None:
            decided = deciding.result()
    stats = (0, 0, 0)
    if table is not None and sample:
        own = Environment(
            environment.env,
            environment.options,
            environment.assume,
            table["platform"],
            table["arch"],
        )

        def selector() -> Selector:
            return Selector(Interpreter(tree, Machine(own)))

        judge: Decides
        if isinstance(decided, dict) and own == judged:
            judge = Decided(tree, decided, selector)
        else:
            judge = selector()
        same, chosen, total, _ = agreement(table, judge, configs)
        stats = (same, chosen, total)
    return SelectorTable(
        table,
        seconds,
        stats,
        error,
        sorted(set(tree.files)),
        list(tree.directories),
        variants=tables,
        problems=problems,
        default=default,
    )


__all__ = ["SelectorTable", "TableBuilder", "build_selector_table"]
