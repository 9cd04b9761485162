"""Run test work in a forked child, so that a hang or a runaway allocation is
contained and reported instead of stalling or killing the test run.

The child reports what it is doing (:func:`progress`) before each piece of work:
an example of a fuzzer, an edit of a tree. The parent waits at most ``idle``
seconds for the next report; a child that stays silent longer is killed and the
outcome names the last piece of work it started, so the hang can be replayed.
The limits are containment, not speed checks: a piece of work takes well under
a second, the limit is generous, and no test asserts on time. Just before the
limit, the child prints its stack to stderr (pytest shows it with the failure).
"""

from __future__ import annotations

import faulthandler
import gc
import multiprocessing
import os
import resource
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Whether this platform can fork and read a process's size (Linux).
CAN_CONTAIN = hasattr(os, "fork") and Path("/proc/self/statm").exists()

#: What :func:`contain` can measure of the child's memory (see there).
MEMORY = ("", "resident", "traced")
_PROGRESS: list[Any] = []  # the child's end of the pipe and its idle limit, while it runs


def progress(label: Any) -> None:
    """Say, from inside a contained child, which piece of work starts now
    (a no-op outside one)."""
    if _PROGRESS:
        conn, idle = _PROGRESS
        conn.send(("at", label))
        _dump_if_silent(idle)


def note(value: Any) -> None:
    """Hand the parent a finding now (kept even if the child later hangs)."""
    if _PROGRESS:
        _PROGRESS[0].send(("note", value))


def _dump_if_silent(idle: float) -> None:
    """Print the child's stack to stderr just before the parent would kill it."""
    faulthandler.cancel_dump_traceback_later()
    faulthandler.dump_traceback_later(max(idle - 1.0, 0.5 * idle))


@dataclass
class Outcome:
    #: "done" (``value`` is the work's result), "escaped" (an exception left the work:
    #: ``detail`` is its type, message and notes), "hung" (killed after ``idle``
    #: seconds of silence) or "died" (the child ended without reporting)
    kind: str
    value: Any = None
    detail: str = ""
    #: the last label :func:`progress` reported, None before any
    last: Any = None
    #: how far the child's resident size rose above what it started with, at its
    #: highest, in bytes (``memory="traced"``: tracemalloc's peak; ``""``: 0)
    peak: int = 0
    #: what the child handed over with :func:`note`, in order
    notes: list[Any] = field(default_factory=list)


def _child(
    conn: Any,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    idle: float,
    extra: int | None,
    memory: str,
) -> None:
    if extra is not None:
        size = int(Path("/proc/self/statm").read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (size + extra, size + extra))
    _PROGRESS[:] = [conn, idle]
    _dump_if_silent(idle)
    start = _resident("VmRSS") if memory == "resident" else 0
    if memory == "traced":
        tracemalloc.start()
    try:
        message: tuple[Any, ...] = ("done", fn(*args))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        notes = "\n".join(getattr(exc, "__notes__", ()))
        message = ("escaped", f"{type(exc).__name__}: {str(exc)[:3000]}\n{notes}".strip())
    faulthandler.cancel_dump_traceback_later()
    if memory == "traced":
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    else:
        peak = max(0, _resident("VmHWM") - start) if memory == "resident" else 0
    conn.send((*message, peak))
    conn.close()


def _resident(field: str) -> int:
    """The kernel's count of this process's resident memory (``VmRSS``, or its high-water
    mark ``VmHWM``), in bytes: every allocation, Python's or C's, at no cost to the work
    (tracemalloc made the evaluator about 15 times slower)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def contain(
    fn: Callable[..., Any],
    *args: Any,
    idle: float,
    extra_address_space: int | None = None,
    memory: str = "",
) -> Outcome:
    """Run ``fn(*args)`` in a forked child; killed after ``idle`` seconds without a
    report. ``extra_address_space`` caps what the child may add to what it inherits.
    ``memory`` measures the child's peak: ``"resident"`` its resident size's rise (every
    allocation, at no cost), ``"traced"`` tracemalloc's peak (Python's allocations in
    use, not what the allocator kept: for long runs such as a fuzzer's, whose resident
    size only grows, at about 15 times the cost), ``""`` none."""
    if memory not in MEMORY:
        raise ValueError(f"memory={memory!r}: one of {MEMORY}")
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(
        target=_child,
        args=(send, fn, args, idle, extra_address_space, memory),
        daemon=True,
    )
    # The child's collector then leaves the inherited heap alone, instead of walking
    # it and so copying its pages (copy-on-write).
    gc.freeze()
    try:
        proc.start()
    finally:
        gc.unfreeze()
    send.close()
    last = None
    notes: list[Any] = []
    try:
        while True:
            if not recv.poll(idle):
                return Outcome("hung", None, f"silent for {idle} s: killed", last, 0, notes)
            try:
                message = recv.recv()
            except EOFError:
                proc.join()
                return Outcome("died", None, f"exit code {proc.exitcode}", last, 0, notes)
            if message[0] == "at":
                last = message[1]
            elif message[0] == "note":
                notes.append(message[1])
            elif message[0] == "done":
                return Outcome("done", message[1], "", last, message[2], notes)
            else:
                return Outcome("escaped", None, message[1], last, message[2], notes)
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        recv.close()
