"""Random edits of real vLLM files never let an exception escape (issue 24, item 4).

Every file the analysis reads on vLLM 0.16.0, 0.23.0 and 0.33.0 (the runtime
profile's tables and priority lists, which read the page's too, and two
selections) is a target. Each edit damages one or two of them with the
operators of :mod:`source_damage` (deleted, duplicated or swapped lines,
inserted tokens and bytes, truncation), drawn from a fixed seed. The edited
tree is analysed, rendered (markdown, JSON) and asked its selections (``select``'s
JSON and text) in a forked child (tests/containment.py: an edit that hangs is
killed and named, and the next ones still run), and nothing may raise. The
unedited tree is analysed once, before the child is forked; an edit asks again
only what read an edited file, as the command line does with its kept results
(tests/edit_runs.py), and a test checks that this gives what an analysis from
scratch gives. The files are served from memory, so the trees on disk are never
written.

``ATTN_REAL_EDITS`` sets the number of edits per release (default 5, so the
fast suite stays fast); the ``slow`` run uses at least 340 per release (1,020
in all) and ``ATTN_REAL_EDITS_SEED`` moves the seed for long local runs. A
failure names the release, the edit's index and the operations, so it can be
replayed with :func:`edit_runs.edited_outputs`.
"""

from __future__ import annotations

import os
import traceback

import pytest
from containment import CAN_CONTAIN, contain, note, progress
from edit_runs import RELEASES, Edit, edited_outputs, edited_reads, edits, pristine

EDITS = int(os.environ.get("ATTN_REAL_EDITS", "5"))
SLOW_EDITS = max(340, EDITS)
SEED = int(os.environ.get("ATTN_REAL_EDITS_SEED", "24"))
#: An edit's child is killed when the next edit has not started after this many
#: seconds (an edit takes well under a second): containment for a hang, not a speed check.
IDLE = 300.0


def run_edited(version: str, edit: Edit) -> str | None:
    """The traceback of whatever escaped from the edited tree's outputs, else None."""
    try:
        edited_outputs(version, edit)
    except Exception:  # noqa: BLE001  # the property under test: nothing escapes
        return traceback.format_exc()
    return None


def _edit_from(version: str, todo: list[Edit], start: int, seed: int) -> None:
    """In a contained child: the edits from ``start`` on, each announced, each escape noted."""
    for i in range(start, len(todo)):
        progress(i)
        found = run_edited(version, todo[i])
        if found is not None:
            note(f"{version} edit {i} (seed {seed}) {todo[i]!r}:\n{found}")


def escaped(version: str, count: int, seed: int = SEED) -> list[str]:
    """What escaped from ``count`` edits, run in a forked child: an edit that hangs
    (:data:`IDLE` seconds without the next edit starting) is reported as such, and
    the edits after it still run, in a new child."""
    pristine(version)  # analysed once, here: every child inherits it
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
@pytest.mark.timeout(3600)  # 340 edits of a release (tox -e heavy)
@pytest.mark.parametrize("version", RELEASES)
def test_many_random_edits_never_escape(version):
    assert escaped(version, SLOW_EDITS, SEED + 1) == []


@pytest.mark.realtree
def test_edits_cover_every_file_read_and_damage_them():
    """Self-check: the targets are the files read (beyond the backends), and edits change them."""
    names = {rel for rel, _ in pristine("0.33.0").files}
    assert {"vllm/platforms/cuda.py", "vllm/v1/attention/backend.py"} <= names
    assert "vllm/v1/attention/selector.py" in names
    targets = [rel for edit in edits("0.33.0", 200, SEED) for rel in edit]
    assert len(set(targets)) > len(names) // 2
    reads = dict(pristine("0.33.0").files)
    changed = sum(edited_reads("0.33.0", edit) != reads for edit in edits("0.33.0", 50, SEED))
    assert changed >= 45


def differ_from_fresh(version: str, count: int, seed: int) -> list[Edit]:
    """The edits whose page, JSON or selections differ from those of the edited tree
    analysed from scratch (a selection not asked again: the unedited one)."""
    base = pristine(version)
    differ = []
    for edit in edits(version, count, seed):
        cheap = {**base.outputs, **edited_outputs(version, edit)}
        if cheap != edited_outputs(version, edit, cheap=False):
            differ.append(edit)
    return differ


@pytest.mark.realtree
def test_an_edit_asks_again_what_a_fresh_analysis_gives():
    """The cheap edit is honest: it gives what analysing the edited tree gives."""
    assert differ_from_fresh("0.16.0", 4, SEED + 2) == []


@pytest.mark.slow
@pytest.mark.realtree
@pytest.mark.parametrize("version", RELEASES)
def test_many_edits_ask_again_what_fresh_analyses_give(version):
    """As above, on every release (the comparison found two evaluator memos that
    answered a second question unlike the first: tests/pyeval/test_memo.py)."""
    assert differ_from_fresh(version, 12, SEED + 7) == []


@needs_fork
@pytest.mark.realtree
def test_a_bug_an_edit_reaches_is_caught(monkeypatch):
    """Self-check of the harness: a bug planted where only damaged text leads (the
    parser of a file's pieces raising on a syntax error) escapes from some edits,
    and the test sees it, although only what the edit touched is asked again."""
    from sphinxext_attn.source import chunks

    pristine("0.16.0")  # the unedited tree has no syntax error: analysed before the bug
    parse = chunks.parse_quietly

    def planted(text: str, filename: str):
        try:
            return parse(text, filename)
        except SyntaxError:
            raise RuntimeError("planted") from None

    monkeypatch.setattr(chunks, "parse_quietly", planted)
    found = escaped("0.16.0", 20)
    assert found and all("RuntimeError: planted" in f for f in found), found
