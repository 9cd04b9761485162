"""Run one piece of work in a forked process while this one does another.

The command line is a short single-threaded process on a machine with more
than one core: the page reader and the evaluator need nothing from each
other until the end, so they run at once. The child inherits the imported
modules (no start-up cost), sends back its result pickled through a pipe and
leaves with ``os._exit`` (no buffers flushed twice, no teardown). Anything
that goes wrong in the child (an exception, a signal, a result that does not
pickle) makes :meth:`Forked.result` return None, and the caller does the work
itself: the outcome never depends on whether the fork helped.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any


def can_fork() -> bool:
    """Forking is safe here: the platform has it and no other thread runs."""
    return hasattr(os, "fork") and threading.active_count() == 1


def spare_core() -> bool:
    """Whether a forked child would run beside this process rather than take
    turns with it: fewer processes waited for a core over the last minute
    than there are cores, less one. (Where they are all busy, a child only
    adds the work both processes repeat.)"""
    try:
        cores = len(os.sched_getaffinity(0))
        waiting = os.getloadavg()[0]
    except (AttributeError, OSError):  # (a platform without them: as if free)
        return True
    return waiting < cores - 0.5


class Forked:
    """``work()`` started in a child process; :meth:`result` waits for it."""

    def __init__(self, work: Callable[[], Any]) -> None:
        read, write = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os.close(read)
            code = 1
            try:
                data = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write, "wb") as out:
                    out.write(data)
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        self._pid = pid
        self._read = read

    def cancel(self) -> None:
        """Stop the child (its result is not wanted) and wait for it; a second
        call does nothing."""
        if self._read < 0:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self._pid, signal.SIGKILL)
        os.close(self._read)
        self._read = -1
        os.waitpid(self._pid, 0)

    def result(self) -> Any | None:
        """The child's result, or None if it failed."""
        with os.fdopen(self._read, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(self._pid, 0)
        if status != 0 or not data:
            return None
        try:
            return pickle.loads(data)
        except Exception:  # a result cut short: the caller does the work itself
            return None
