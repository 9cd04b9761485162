"""Keep the cyclic garbage collector off the test session's long-lived heap.

A test session holds millions of objects for its whole run: parsed release
trees, analyses and selector tables cached once per session (conftest.py,
vllm_trees.py), modules, Sphinx's registries. CPython's collector rescans all
of them in every full collection, which it makes each time the heap has grown
by a quarter: on tests/page, tests/selection, tests/selector and tests/analysis, 21 full
collections of up to 3.7 million objects took 27 s of the session's 121 s of
CPU, paid again in every environment of the version matrix.

So the session makes no full collection of its own (young objects are still
collected as usual). At the end of each test module, its fixtures torn down,
one full collection frees what the module left, and what survives is frozen
(``gc.freeze``): the next one scans only what was made since. A frozen object
is still freed when its last reference goes; only a reference cycle of frozen
objects would stay, and what a module made for itself is gone by then. Forked
children (containment.py's, Sphinx's parallel readers) collect as CPython does
by default. No test changes, nor anything the package does: the analysis pauses
the collector itself while it parses (analysis/pipeline.py), and the command
line runs in processes of its own.
"""

from __future__ import annotations

import gc
import os

import pytest

#: gen-2 threshold that no session reaches: full collections only in :func:`settle`
NEVER = 2**30


def start() -> None:
    """Leave full collections to :func:`settle`; a forked child gets CPython's own."""
    young, middle, old = gc.get_threshold()
    gc.set_threshold(young, middle, NEVER)
    os.register_at_fork(after_in_child=lambda: gc.set_threshold(young, middle, old))


def module_ends(item: pytest.Item, nextitem: pytest.Item | None) -> bool:
    """Whether ``item`` is the last test of its module in this run."""
    return nextitem is None or nextitem.path != item.path


def settle() -> None:
    """Collect what the ended module left, then freeze the survivors."""
    gc.collect()
    gc.freeze()
