"""Random edits of real vLLM files, each analysed at the cost of what it changes.

A random-edit test (tests/analysis/test_real_edits.py) needs thousands of
edited trees. Analysing each from scratch repeats, for every edit, the work on
the files it did not touch. Instead, the unedited tree is analysed once
(:func:`pristine`, in the parent before any child is forked): the runtime
profile's units (``analysis/units.py``) are kept with the files each one read
and the views of them it rested on (which statements, the outline, ...:
``source/views.py``), and so are the files each selection read. An edit then
asks again exactly what the command line with its kept results would ask again
after the same edit: the units that read a view of an edited file that the edit
changed (each backend's answers, the rest of the page, the evaluated priority
lists, the syntax checks), the selections that read an edited file, and every
renderer (markdown, JSON, ``select``'s JSON and text). Unedited files keep their
parsed pieces; edited ones are read and parsed afresh.

Only what no edited file can change is reused, so an exception an edit can
raise in the real command line is raised here too;
:func:`outputs` with ``cheap=False`` analyses the edited tree from scratch, and
a test checks that both give the same outputs.
"""

from __future__ import annotations

import functools
import json
import pickle
import random
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import vllm_trees
from source_damage import TOKENS, mutate

from sphinxext_attn.analysis.unit_runner import Kept
from sphinxext_attn.analysis.units import runtime_analysis
from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.key import AnalysisKey
from sphinxext_attn.model.selection import Config, Decision
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.render.jsonout import render_json
from sphinxext_attn.render.markdown import render_markdown
from sphinxext_attn.render.select_text import render_text
from sphinxext_attn.runtime.questions import kv_cache_dtypes
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.selection.fa_version import flash_attn_version
from sphinxext_attn.source.recording import decode_source
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.source.views import Compare

RELEASES = ("0.16.0", "0.23.0", "0.33.0")
#: Selections asked of every edited tree: a standard and an MLA decision.
CONFIGS = (Config(), Config(capability="10.0", use_mla=True, kv_cache_dtype="fp8"))
KINDS = ("delete", "duplicate", "replace_line", "token", "retoken", "bytes", "truncate")

Edit = dict[str, list[tuple[Any, ...]]]
Reads = dict[str, bytes]


@dataclass
class Baseline:
    """The unedited tree of one release, analysed once."""

    root: Path
    #: the bytes of every file the analysis and the selections read
    files: tuple[tuple[str, bytes], ...] = ()
    #: the tree the unedited analysis parsed (its pieces are reused for unedited files)
    parsing: SourceTree | None = None
    #: each unit's key -> (the files it read, the views of them it rested on, its
    #: result pickled as the CLI keeps it)
    units: dict[str, tuple[frozenset[str], dict[str, Any], bytes]] = field(default_factory=dict)
    #: the files each of :data:`CONFIGS`' selections read
    selection_reads: tuple[frozenset[str], ...] = ()
    #: the unedited outputs (see :func:`outputs`)
    outputs: dict[str, str] = field(default_factory=dict)

    def tree(self, reads: Reads, edited: frozenset[str] | None) -> SourceTree:
        """A tree serving ``reads``; with ``edited``, the unedited files' syntax trees,
        pieces and indexes come already parsed (they depend on each file's text alone,
        and nothing changes them after parsing)."""
        if edited is None or self.parsing is None:
            return SourceTree(self.root, dict(reads))
        tree = SourceTree(self.root, dict(reads))
        tree.reuse_parsing(self.parsing, edited)
        return tree


class _Recorder:
    """The unit store of the unedited run: keeps every unit with the files it read."""

    def __init__(self, baseline: Baseline) -> None:
        self.baseline = baseline

    def get(self, key: str) -> Any | None:
        return None

    def put(self, key: str, done: Kept) -> None:
        data = pickle.dumps(done, pickle.HIGHEST_PROTOCOL)
        self.baseline.units[key] = (frozenset(done.depends_on()), dict(done.views), data)


def _decoded(reads: Reads, rel: str) -> str | None:
    try:
        return decode_source(reads[rel]) if rel in reads else None
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return None


class _Kept:
    """The unit store of an edited run: a unit none of whose views of an edited file
    changed is the unedited one (a fresh copy, as the command line unpickles its
    kept units), as the command line's :class:`UnitEntries` decides."""

    def __init__(self, baseline: Baseline, edited: frozenset[str], reads: Reads) -> None:
        self.baseline = baseline
        self.edited = edited
        before = dict(baseline.files)
        self.compare = Compare(lambda rel: _decoded(before, rel), lambda rel: _decoded(reads, rel))
        self.asked: list[str] = []

    def get(self, key: str) -> Kept | None:
        kept = self.baseline.units.get(key)
        if kept is None:
            return None
        paths, views, data = kept
        if any(not self.compare.same(rel, views.get(rel, ())) for rel in paths & self.edited):
            return None
        found: Kept = pickle.loads(data)
        return found

    def put(self, key: str, done: Kept) -> None:
        self.asked.append(key)


def select_output(selector: Selector, config: Config) -> str:
    """What ``select`` prints for ``config`` (JSON, then text), asked as it asks."""
    interp = selector.interp
    kv_cache_dtypes(interp)  # --kv-cache-dtype is checked against the release's list
    data = selector.explain(selector.decide(config)).to_json()
    decision = Decision.from_json(data)
    data["labels"] = {name: decision.label(name) for name in data["priorities"]}
    data["flash_attn_version"] = flash_attn_version(interp, config, data["selected"])
    decision.flash_attn_version = data["flash_attn_version"]
    text = json.dumps(data, indent=2, ensure_ascii=False)
    return text + "\n" + render_text(config, decision)


def outputs(
    base: Baseline,
    reads: Reads,
    edited: frozenset[str],
    cheap: bool,
    asked: list[str] | None = None,
) -> dict[str, str]:
    """The page, the JSON and each selection of the tree ``reads`` describes.
    ``cheap``: ask again only what read a changed view of a file of ``edited`` (the
    rest is the baseline's; ``asked`` gets the keys of the units asked again); else
    analyse it all from scratch."""
    store = _Kept(base, edited, reads) if cheap else None
    tree = base.tree(reads, edited if cheap else None)
    analysis, _ = runtime_analysis(AnalysisKey(str(base.root)), store=store, source=tree)
    if store is not None and asked is not None:
        asked += store.asked
    out = {"markdown": render_markdown(analysis), "json": render_json(analysis)}
    asked = [
        config
        for config, paths in zip(CONFIGS, base.selection_reads, strict=True)
        if not cheap or paths & edited
    ]
    if asked:  # one evaluator for them all, as `select --cases` uses
        selector = Selector(Interpreter(base.tree(reads, edited if cheap else None), Machine()))
        for config in asked:
            out[repr(config)] = select_output(selector, config)
    return out


@functools.cache
def pristine(version: str) -> Baseline:
    """The unedited release, analysed once: its units, reads and outputs."""
    base = Baseline(vllm_trees.tree(version))
    base.parsing = SourceTree(base.root)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis, _ = runtime_analysis(
            AnalysisKey(str(base.root)), store=_Recorder(base), source=base.parsing
        )
        base.outputs = {"markdown": render_markdown(analysis), "json": render_json(analysis)}
        reads = []
        for config in CONFIGS:
            tree = SourceTree(base.root)
            tree.share_parsing(base.parsing)
            with tree.recording() as record:
                base.outputs[repr(config)] = select_output(
                    Selector(Interpreter(tree, Machine())), config
                )
            reads.append(frozenset(record.paths))
    base.selection_reads = tuple(reads)
    base.files = tuple(sorted(base.parsing.read_bytes().items()))
    return base


def random_ops(rng: random.Random) -> list[tuple[Any, ...]]:
    """One to three operations of :func:`source_damage.mutate`."""
    ops: list[tuple[Any, ...]] = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(KINDS)
        if kind in ("delete", "duplicate"):
            ops.append((kind, rng.randrange(100_000)))
        elif kind == "replace_line":
            ops.append((kind, rng.randrange(100_000), rng.randrange(100_000)))
        elif kind in ("token", "retoken"):
            ops.append((kind, rng.randrange(10_000_000), rng.choice(TOKENS)))
        elif kind == "bytes":
            ops.append((kind, rng.randrange(10_000_000), rng.randbytes(rng.randint(1, 8))))
        else:
            ops.append((kind, rng.randrange(10_000_000)))
    return ops


def edits(version: str, count: int, seed: int) -> list[Edit]:
    """``count`` edits of ``version``'s files: each, the operations per damaged file."""
    names = [rel for rel, _ in pristine(version).files]
    rng = random.Random(f"{seed}:{version}")
    return [
        {rel: random_ops(rng) for rel in rng.sample(names, rng.choice((1, 1, 2)))}
        for _ in range(count)
    ]


def edited_reads(version: str, edit: Edit) -> Reads:
    reads = dict(pristine(version).files)
    for rel, ops in edit.items():
        reads[rel] = mutate(reads[rel], ops)
    return reads


def edited_outputs(version: str, edit: Edit, cheap: bool = True) -> dict[str, str]:
    """The outputs of ``version`` after ``edit`` (see :func:`outputs`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return outputs(pristine(version), edited_reads(version, edit), frozenset(edit), cheap)


def changed_outputs(
    version: str, rel: str, change: Callable[[str], str], cheap: bool = True
) -> tuple[dict[str, str], list[str]]:
    """The outputs of ``version`` after ``change`` (of the text) to ``rel`` (see
    :func:`outputs`), and the units asked again."""
    reads = dict(pristine(version).files)
    reads[rel] = change(reads[rel].decode()).encode()
    asked: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = outputs(pristine(version), reads, frozenset([rel]), cheap, asked)
    return out, asked
