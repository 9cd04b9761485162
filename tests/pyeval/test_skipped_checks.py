"""A list-of-reasons body run check by check (``validate_configuration``): a check
skipped as not evaluated stands in the list once, and a later check that only
reads the value it would have assigned is unknown for that same reason, never
for a second one (``x = probe(...)`` then ``if x is not None``, as vLLM writes it)."""

from __future__ import annotations

from typing import Any

from runtime_trees import runtime_backend

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.pyeval.values import NODE
from sphinxext_attn.source.tree import SourceTree

MODULE = "vllm.v1.attention.backends.my_attn"
HEADER = "from vllm.platforms import current_platform\nimport outside_pkg\n"

VET = """
@classmethod
def vet(cls, head_size):
    reasons = []
    if head_size not in (64, 128):
        reasons.append("head_size not supported")
    combination = outside_pkg.probe(head_size)
    if combination is not None:
        reasons.append(combination)
    if head_size > 256:
        reasons.append("too big")
    combination = "later"
    reasons.append(combination)
    return reasons
"""


def _vet(tmp_path: Any, head_size: int) -> tuple[list[str], list[str]]:
    runtime_backend(tmp_path, VET, header=HEADER)
    it = Interpreter(SourceTree(tmp_path), Machine())
    cls = it.module_attr(it.module(MODULE), "MyBackend", NODE)
    it.lenient_functions = frozenset({"vet"})
    reasons = it.call(it.getattr(cls, "vet", NODE, ""), [head_size], {}, NODE, "")
    return reasons, [str(u) for u in it.skipped_checks]


def test_a_check_reading_a_skipped_assignment_gives_no_second_reason(tmp_path: Any) -> None:
    reasons, skipped = _vet(tmp_path, 512)
    assert len(skipped) == 1 and "outside_pkg.probe" in skipped[0], skipped
    assert reasons[0] == "head_size not supported"
    assert reasons[1] == f"not evaluated: {skipped[0]}"
    # the checks after it still run; a name bound again reads its new value
    assert reasons[2:] == ["too big", "later"]
    assert not any("bound" in r or "not defined" in r for r in reasons)


STALE = """
@classmethod
def vet(cls, head_size):
    reasons = []
    count: int = 1
    count += outside_pkg.extra(head_size)
    if count > 1:
        reasons.append("counted")
    low, high = 0, 1
    if head_size > 64:
        low, high = outside_pkg.bounds(head_size)
    if high > low:
        reasons.append("in bounds")
    kept = [x for x in (head_size,)]
    x = 5
    if (found := outside_pkg.find(head_size)) and [x for x in kept]:
        reasons.append(found)
    reasons.append(x)
    return reasons
"""


def test_a_name_a_skipped_check_binds_is_never_read_stale(tmp_path: Any) -> None:
    """``count += probe()`` skipped: ``count`` is no longer 1, so the check after
    it is unknown (for the probe's reason), not answered with the old value; the
    same for names bound by statements inside a skipped ``if`` and by ``:=``. A
    comprehension's own target is not the frame's (``x`` keeps 5)."""
    runtime_backend(tmp_path, STALE, header=HEADER)
    it = Interpreter(SourceTree(tmp_path), Machine())
    cls = it.module_attr(it.module(MODULE), "MyBackend", NODE)
    it.lenient_functions = frozenset({"vet"})
    reasons = it.call(it.getattr(cls, "vet", NODE, ""), [128], {}, NODE, "")
    skipped = [str(u) for u in it.skipped_checks]
    assert [s.split(" (outside")[0] for s in skipped] == [
        "call into outside_pkg.extra",
        "call into outside_pkg.bounds",
        "call into outside_pkg.find",
    ]
    # one gap (no reason appended between the three), then the frame's own x
    assert reasons == [f"not evaluated: {skipped[0]}", 5]
