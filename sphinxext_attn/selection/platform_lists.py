"""Every list a platform's ``get_valid_backends`` walks, with the conditions leading to it.

On ROCm the list depends on the machine as much as on the layer: the GPU arch
(read at import), the AITER switches (environment variables) and whether aiter
is installed, then the layer (MLA, sparse, a KV connector, an encoder-decoder
model, the KV cache dtype). The machine facts are explored as
:mod:`.priority_paths` explores a priority function's parameters: a run records
the facts it read, and other values are tried only for those (a fresh evaluator
per machine, since vLLM reads them once, at import). Each run asks the
platform's own ``get_valid_backends`` (through :class:`Selector`) for every
layer shape, so the list is the one vLLM walks, after its own edits.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from itertools import pairwise, product
from typing import Any

from sphinxext_attn.knowledge.devices import platform_class
from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.environment import MODEL_ATTN_TYPE, MODEL_ATTN_TYPES, Environment
from sphinxext_attn.model.records import Location, PriorityList
from sphinxext_attn.model.selection import Config
from sphinxext_attn.pyeval import Interpreter, Raised, Unknown
from sphinxext_attn.runtime.priority_titles import _merge
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.source.tree import SourceTree

#: A gfx name as the code writes one (the release's own code says which are GPUs).
GFX = re.compile(r"gfx[0-9a-f]{2,4}\Z")
ENV_VAR = re.compile(r"[A-Z][A-Z0-9_]*\Z")
#: Runs of the machine exploration before it gives up.
MAX_RUNS = 64
FLAGS = {
    "installed.aiter": ("aiter installed", "aiter not installed"),
    "use_kv_connector": ("with a KV connector", "without a KV connector"),
    "use_sparse": ("sparse", "dense"),
    MODEL_ATTN_TYPE: ("encoder-decoder model", "decoder model"),
}


@dataclass(frozen=True)
class Run:
    """One machine (arch and facts) and one layer shape: the list walked."""

    arch: str
    facts: tuple[tuple[str, str], ...]
    layer: tuple[tuple[str, Any], ...]
    backends: tuple[str, ...]


def named_archs(tree: SourceTree, base: Environment) -> list[str]:
    """The GPUs the platform's module names: gfx constants for which the release's
    own ``get_device_capability`` derives a capability (``gfx11`` is a family)."""
    interp = Interpreter(tree, Machine(base))
    cls = platform_class(interp, base.platform)
    text = tree.text(cls.path) or ""
    named = {
        n.value
        for n in ast.walk(ast.parse(text))
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and GFX.match(n.value)
    }
    # a name that begins another (gfx94 of gfx942) is a family, not a GPU
    gpus = [a for a in named if not any(o != a and o.startswith(a) for o in named)]
    return [
        a
        for a in sorted(gpus, key=lambda a: (len(a), a))
        if arch_capability(tree, base, a) is not None
    ]


def arch_capability(tree: SourceTree, base: Environment, arch: str) -> tuple[int, int] | None:
    """The capability the release's own code derives for ``arch`` (None: it derives none)."""
    selector = machine_selector(tree, _with(base, arch=arch))
    try:
        with selector.interp.guarded():
            gpu = selector.gpu(Config(capability="0.0"))
    except (Unknown, Raised):
        return None
    return None if gpu == (0, 0) else gpu


def _with(base: Environment, arch: str = "", env: dict[str, str] | None = None) -> Environment:
    assume = dict(base.assume)
    plain_env = dict(base.env)
    for name, value in (env or {}).items():
        if name.startswith("installed."):
            assume[name] = value
        elif value == "unset":
            plain_env.pop(name, None)
        else:
            plain_env[name] = value
    return Environment(plain_env, base.options, assume, base.platform, arch or base.arch)


def layers(tree: SourceTree, platform_path: str) -> list[dict[str, Any]]:
    """The layer shapes tried: MLA (and sparse MLA), a KV connector, an
    encoder-decoder model, and each KV cache dtype the platform's module
    compares ``kv_cache_dtype`` with (in a chain too: ``"a" < kv_cache_dtype < "b"``)."""
    text = tree.text(platform_path) or ""
    compared = sorted(
        {
            value
            for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Compare)
            for left, right in pairwise([node.left, *node.comparators])
            for value in _kv_constants(left, right)
        }
    )
    out = []
    for mla, sparse, connector, attn_type, kv in product(
        (False, True),
        (False, True),
        (False, True),
        MODEL_ATTN_TYPES,
        list(dict.fromkeys(["auto", *compared])),
    ):
        if sparse and not mla:
            continue
        out.append(
            {
                "use_mla": mla,
                "use_sparse": sparse,
                "use_kv_connector": connector,
                MODEL_ATTN_TYPE: attn_type,
                "kv_cache_dtype": kv,
            }
        )
    return out


def _kv_constants(left: ast.expr, right: ast.expr) -> list[str]:
    """The strings a ``...kv_cache_dtype`` is compared with (``!= "fp8_e5m2"``)."""
    for side, other in ((left, right), (right, left)):
        name = side.attr if isinstance(side, ast.Attribute) else getattr(side, "id", "")
        if name.endswith("kv_cache_dtype"):
            items = other.elts if isinstance(other, ast.Tuple | ast.List | ast.Set) else [other]
            return [
                i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)
            ]
    return []


def explore_machine(
    tree: SourceTree, base: Environment, arch: str, shapes: list[dict[str, Any]]
) -> list[Run]:
    """Every run over the facts the code reads on ``arch`` (environment variables
    and installed packages), branching only where a fact was read."""
    runs: list[Run] = []
    count = 0

    def visit(fixed: dict[str, str]) -> None:
        nonlocal count
        count += 1
        if count > MAX_RUNS:
            raise Unknown(f"too many machine settings to list on {arch}")
        read: dict[str, str] = {}
        for shape in shapes:
            attn_type = shape[MODEL_ATTN_TYPE]
            options = {**base.options, **({MODEL_ATTN_TYPE: attn_type} if attn_type else {})}
            env = _with(base, arch, fixed)
            env = Environment(env.env, options, env.assume, env.platform, env.arch)
            # the machine as set: a guessed fact is explored here, not made conditional
            decision = machine_selector(tree, env).decide_here(_config(shape))
            if decision.error:
                raise Unknown(f"the list on {arch} is not evaluated: {decision.error}")
            seen = {}
            for fact in decision.assumptions:
                name, _, value = fact.partition("=")
                if _varied(name, base):
                    seen[name] = _value_word(name, value)
                    read.setdefault(name, seen[name])
            layer = tuple(sorted(shape.items(), key=lambda kv: kv[0]))
            facts = tuple(sorted({**seen, **fixed}.items()))
            runs.append(Run(arch, facts, layer, tuple(decision.priorities)))
        for name, current in read.items():
            if name not in fixed:
                for value in _values(name):
                    if value != current:
                        visit({**fixed, name: value})
                fixed = {**fixed, name: current}

    visit({})
    return runs


#: machines' selectors a tree keeps at most (beyond, they are made again)
MAX_SELECTORS = 256


def machine_selector(tree: SourceTree, env: Environment) -> Selector:
    """One selector per machine on a tree, kept with the tree: a machine's modules
    are evaluated once for its capability, its lists and the GPUs its backends accept."""
    key = ("machine selector", env.key())
    found = tree.derived.get(key)
    if not isinstance(found, Selector):
        if len(tree.derived) > MAX_SELECTORS:
            tree.derived.clear()
        found = Selector(Interpreter(tree, Machine(env)))
        tree.derived[key] = found
    return found


def _varied(name: str, base: Environment) -> bool:
    """A fact the lists are explored over: an environment variable or an installed
    package the code read, unless the reader set it."""
    if name.startswith("installed."):
        return name not in base.assume
    return bool(ENV_VAR.match(name)) and name not in base.env


def _value_word(name: str, value: str) -> str:
    if name.startswith("installed."):
        return "true" if value == "true" else "false"
    return value


def _values(name: str) -> list[str]:
    return ["false", "true"] if name.startswith("installed.") else ["unset", "1", "0"]


def _config(shape: dict[str, Any]) -> Config:
    return Config(
        capability="0.0",
        head_size=576 if shape["use_mla"] else 128,
        kv_cache_dtype=shape["kv_cache_dtype"],
        use_mla=shape["use_mla"],
        use_sparse=shape["use_sparse"],
        use_kv_connector=shape["use_kv_connector"],
    )


def platform_priorities(tree: SourceTree, base: Environment) -> list[PriorityList]:
    """The lists of a platform with ``get_valid_backends`` (ROCm), per group of GPUs
    that behave alike, each titled by the facts and layer shapes leading to it."""
    interp = Interpreter(tree, Machine(base))
    cls = platform_class(interp, base.platform)
    archs = [base.arch] if base.arch else named_archs(tree, base)
    shapes = layers(tree, cls.path)
    by_arch = {arch: explore_machine(tree, base, arch, shapes) for arch in archs}
    groups: dict[frozenset[Any], list[str]] = {}
    for arch, runs in by_arch.items():
        signature = frozenset((r.facts, r.layer, r.backends) for r in runs)
        groups.setdefault(signature, []).append(arch)
    out: list[PriorityList] = []
    location = Location(cls.path, cls.node.lineno)
    for members in groups.values():
        runs = by_arch[members[0]]
        name = "+".join(members)
        title = ", ".join(members)
        for category in ("standard", "mla"):
            mine = [r for r in runs if dict(r.layer)["use_mla"] == (category == "mla")]
            for backends, text in _titled(mine):
                out.append(
                    PriorityList(
                        category, name, backends, location, conditions=text, arch_title=title
                    )
                )
    return out


def _titled(runs: list[Run]) -> list[tuple[tuple[str, ...], str]]:
    """(list, conditions in words) per distinct list of one GPU group and category."""
    dims: dict[str, list[Any]] = {}
    for run in runs:
        for name, value in (*run.facts, *run.layer):
            if name == "use_mla":
                continue
            values = dims.setdefault(name, [])
            if value not in values:
                values.append(value)
    names = list(dims)
    points: dict[tuple[str, ...], set[tuple[int, ...]]] = {}
    for run in runs:
        known = dict((*run.facts, *run.layer))
        axes = [[dims[n].index(known[n])] if n in known else range(len(dims[n])) for n in names]
        points.setdefault(run.backends, set()).update(product(*axes))
    out = []
    for backends, mine in points.items():
        conditions = _merge(
            [{n: frozenset({p[i]}) for i, n in enumerate(names)} for p in sorted(mine)]
        )
        # one round: a second changes nothing (test_one_widening_round_reaches_the_fixed_point)
        conditions = _merge(_widened(conditions, mine, names))
        out.append((backends, "" if len(points) == 1 else _factored(conditions, dims)))
    return out


def _widened(
    conditions: list[dict[str, frozenset[int]]], mine: set[tuple[int, ...]], names: list[str]
) -> list[dict[str, frozenset[int]]]:
    """Each condition with every restriction dropped that the list does not need
    (its points stay this list's), then those another condition covers dropped."""
    sizes = {n: 1 + max(p[i] for p in mine) for i, n in enumerate(names)}
    wide = []
    for condition in conditions:
        for name in names:
            trial = {**condition, name: frozenset(range(sizes[name]))}
            if set(product(*(sorted(trial[n]) for n in names))) <= mine:
                condition = trial
        wide.append(condition)
    kept: list[dict[str, frozenset[int]]] = []
    for condition in wide:
        if not any(all(condition[n] <= other[n] for n in names) for other in kept):
            kept = [o for o in kept if not all(o[n] <= condition[n] for n in names)]
            kept.append(condition)
    return kept


def _factored(conditions: list[dict[str, frozenset[int]]], dims: dict[str, list[Any]]) -> str:
    """The conditions in words, what they share said once: ``aiter installed, and
    VLLM_ROCM_USE_AITER=1 or VLLM_ROCM_USE_AITER_MHA=0``."""
    shared = {
        n: a
        for n, a in conditions[0].items()
        if len(a) < len(dims[n]) and all(c[n] == a for c in conditions)
    }
    rest = [_words({n: a for n, a in c.items() if n not in shared}, dims) for c in conditions]
    rest = [r for r in rest if r]
    head = _words(shared, dims)
    if not rest:
        return head
    either = " or ".join(f"({r})" if ", " in r and len(rest) > 1 else r for r in rest)
    return f"{head}, and {either}" if head else either


def _words(condition: dict[str, frozenset[int]], dims: dict[str, list[Any]]) -> str:
    parts = []
    for name, allowed in condition.items():
        values = dims[name]
        if len(allowed) == len(values):
            continue
        chosen = [values[i] for i in sorted(allowed)]
        if name in FLAGS:
            yes, no = FLAGS[name]
            truth = chosen[0] not in (False, None, "false")
            parts.append(yes if truth else no)
        elif name == "kv_cache_dtype":
            # the first value stands for every dtype the code does not compare with
            others = [v for v in values if v not in chosen]
            parts.append(
                f"KV cache other than {', '.join(others)}"
                if values[0] in chosen
                else f"KV cache {', '.join(chosen)}"
            )
        else:
            parts.append(f"{name}={'|'.join(str(v) for v in chosen)}")
    return ", ".join(parts)
