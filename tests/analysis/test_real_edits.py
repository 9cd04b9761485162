"""Random edits of real vLLM files never let an exception escape (issue 24, item 4).

Every file the analysis reads on vLLM 0.16.0, 0.23.0 and 0.33.0 (the runtime
profile's tables and priority lists, which read the page's too, and two
selections) is a target. Each
edit damages one or two of them with the operators of :mod:`test_fuzz`
(deleted, duplicated or swapped lines, inserted tokens and bytes, truncation),
drawn from a fixed seed; the edited tree is then analysed, rendered and asked
its selections in a forked child (tests/containment.py: an edit that hangs is
killed and named, and the next ones still run), and nothing may raise. The files are served
from memory (:class:`SourceTree` takes the bytes read), so the trees on disk
are never written.

``ATTN_REAL_EDITS`` sets the number of edits per release (default 5, so the
fast suite stays fast); the ``slow`` run uses at least 340 per release
(1,020 in all) and ``ATTN_REAL_EDITS_SEED`` moves the seed for long local
runs. A failure names the release, the edit's index and the operations, so
it can be replayed with :func:`edited_reads`.
"""

from __future__ import annotations

import functools
import os
import random
import traceback
import warnings
from pathlib import Path

import pytest
import vllm_trees
from containment import CAN_CONTAIN, contain, note, progress
from source_damage import TOKENS, mutate

from sphinxext_attn.analysis.pipeline import analyze
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.render.jsonout import render_json
from sphinxext_attn.render.markdown import render_markdown
from sphinxext_attn.select.decision import Config, Selector
from sphinxext_attn.source.tree import SourceTree

RELEASES = ("0.16.0", "0.23.0", "0.33.0")
EDITS = int(os.environ.get("ATTN_REAL_EDITS", "5"))
SLOW_EDITS = max(340, EDITS)
SEED = int(os.environ.get("ATTN_REAL_EDITS_SEED", "24"))
#: An edit's child is killed when the next edit has not started after this many
#: seconds (an edit takes about a second): containment for a hang, not a speed check.
IDLE = 300.0
#: Selections asked of every edited tree: a standard and an MLA decision.
CONFIGS = (Config(), Config(capability="10.0", use_mla=True, kv_cache_dtype="fp8"))
KINDS = ("delete", "duplicate", "replace_line", "token", "retoken", "bytes", "truncate")

Reads = dict[str, bytes]


@functools.cache
def pristine(version: str) -> tuple[Path, tuple[tuple[str, bytes], ...]]:
    """The tree and the bytes of every file a clean run reads."""
    root = vllm_trees.tree(version)
    tree = SourceTree(root)
    analyze(root, source=tree)
    selector = Selector(Interpreter(tree))
    for config in CONFIGS:
        selector.explain(selector.decide(config))
    return root, tuple(sorted(tree._reads.items()))


def random_ops(rng: random.Random) -> list[tuple]:
    """One to three operations of :func:`test_fuzz.mutate`."""
    ops: list[tuple] = []
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


def edits(version: str, count: int, seed: int) -> list[dict[str, list[tuple]]]:
    """``count`` edits of ``version``'s files: each, the operations per damaged file."""
    _, files = pristine(version)
    names = [rel for rel, _ in files]
    rng = random.Random(f"{seed}:{version}")
    return [
        {rel: random_ops(rng) for rel in rng.sample(names, rng.choice((1, 1, 2)))}
        for _ in range(count)
    ]


def edited_reads(version: str, edit: dict[str, list[tuple]]) -> Reads:
    _, files = pristine(version)
    reads = dict(files)
    for rel, ops in edit.items():
        reads[rel] = mutate(reads[rel], ops)
    return reads


def run_edited(version: str, edit: dict[str, list[tuple]]) -> str | None:
    """Analyse, render and select on the edited tree; the traceback of whatever escaped."""
    root, _ = pristine(version)
    reads = edited_reads(version, edit)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            analysis = analyze(root, source=SourceTree(root, dict(reads)))
            render_markdown(analysis)
            render_json(analysis)
            selector = Selector(Interpreter(SourceTree(root, dict(reads))))
            for config in CONFIGS:
                selector.explain(selector.decide(config)).to_json()
    except Exception:  # noqa: BLE001  # the property under test: nothing escapes
        return traceback.format_exc()
    return None


def _edit_from(version: str, todo: list[dict[str, list[tuple]]], start: int, seed: int) -> None:
    """In a contained child: the edits from ``start`` on, each announced, each escape noted."""
    for i in range(start, len(todo)):
        progress(i)
        found = run_edited(version, todo[i])
        if found is not None:
            note(f"{version} edit {i} (seed {seed}) {todo[i]!r}:\n{found}")


def escaped(version: str, count: int, seed: int = SEED) -> list[str]:
    """What escaped from ``count`` edits, each edit's run in a forked child: an edit that
    hangs (:data:`IDLE` seconds without the next edit starting) is reported as such, and
    the edits after it still run, in a new child."""
    pristine(version)  # read once, here: every child inherits it
    todo = edits(version, count, seed)
    failures: list[str] = []
    start = 0
    while start < len(todo):
        out = contain(_edit_from, version, todo, start, seed, idle=IDLE)
        failures += out.notes
        if out.kind == "done":
            break
        i = start if out.last is None else out.last
        failures.append(f"{version} edit {i} (seed {seed}) {todo[i]!r}: {out.kind}: {out.detail}")
        start = i + 1
    return failures


needs_fork = pytest.mark.skipif(not CAN_CONTAIN, reason="edits run in a forked child (Linux)")


@needs_fork
@pytest.mark.realtree
@pytest.mark.parametrize("version", RELEASES)
def test_random_edits_never_escape(version):
    assert escaped(version, EDITS) == []


@needs_fork
@pytest.mark.slow
@pytest.mark.realtree
@pytest.mark.timeout(7200)  # hundreds of whole-tree analyses (tox -e heavy)
@pytest.mark.parametrize("version", RELEASES)
def test_many_random_edits_never_escape(version):
    assert escaped(version, SLOW_EDITS, SEED + 1) == []


@pytest.mark.realtree
def test_edits_cover_every_file_read_and_damage_them():
    """Self-check: the targets are the files read (beyond the backends), and edits change them."""
    _, files = pristine("0.33.0")
    names = {rel for rel, _ in files}
    assert {"vllm/platforms/cuda.py", "vllm/v1/attention/backend.py"} <= names
    assert "vllm/v1/attention/selector.py" in names
    targets = [rel for edit in edits("0.33.0", 200, SEED) for rel in edit]
    assert len(set(targets)) > len(names) // 2
    reads = dict(files)
    changed = sum(edited_reads("0.33.0", edit) != reads for edit in edits("0.33.0", 50, SEED))
    assert changed >= 45
