"""Results kept on disk between command-line runs, valid while the tree is unchanged.

Evaluating every backend class costs about a second on a release; a pre-commit
hook or a script asking again on the same tree should not pay it twice. Like
mypy's and ruff's caches, an entry records the state (size, mtime, inode) of
every file the analysis read and every folder it looked in (a file added there
can change the answer); any difference, a different version of this package,
or another Python makes the entry stale and the work is done again.

The runtime profile is also kept unit by unit (see ``analysis/units.py``): each
backend's answers with the files they read, so that after an edit only the
answers that read the edited file are asked again (:class:`UnitEntries`).

An entry is two pickles: the stamps, then the value (a stale entry costs
only its stamps). Entries are pickles in a folder only the user can write (``0700``); an entry
owned by anyone else, or unreadable, is ignored, never trusted. ``--no-cache``
or ``SPHINXEXT_ATTN_CACHE_DIR=`` (empty) turns the cache off.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pickle
import sys
from pathlib import Path
from typing import Any

#: Bumped when what is stored changes shape.
FORMAT = 4
ENV_DIR = "SPHINXEXT_ATTN_CACHE_DIR"
#: An entry larger than this is not written (a decision map of many thousand cases).
MAX_ENTRY_BYTES = 64 * 1024 * 1024
#: Entries kept; beyond this the least recently used go (trees, versions, options).
MAX_ENTRIES = 48

Stamp = tuple[int, int, int] | None


def default_dir() -> Path | None:
    """``$SPHINXEXT_ATTN_CACHE_DIR``, else ``$XDG_CACHE_HOME/sphinxext-attn``, else
    ``~/.cache/sphinxext-attn``; None when the variable is set but empty (off)."""
    configured = os.environ.get(ENV_DIR)
    if configured is not None:
        return Path(configured) if configured.strip() else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sphinxext-attn"


def _stamp(path: str) -> Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def _code_stamp() -> str:
    """This package's own state: a changed checkout must not reuse old answers."""
    import hashlib  # imported when a cache is used (--no-cache starts faster)

    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    digest = hashlib.sha256(f"{sys.version}|{FORMAT}".encode())
    for rel, stamp in sorted(_sources(package, "")):
        digest.update(f"{rel}|{stamp}".encode())
    return digest.hexdigest()


def _sources(folder: str, prefix: str) -> list[tuple[str, Stamp]]:
    """The ``.py`` files under ``folder`` (paths from the package) with their stamps."""
    found: list[tuple[str, Stamp]] = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                found += _sources(entry.path, f"{prefix}{entry.name}/")
            elif entry.name.endswith(".py"):
                st = entry.stat()
                found.append((prefix + entry.name, (st.st_size, st.st_mtime_ns, st.st_ino)))
    return found


class RunCache:
    """One folder of entries; every method is a no-op when ``directory`` is None."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self._code: str | None = None

    def _file(self, kind: str, root: Path, options: dict[str, Any]) -> Path | None:
        if self.directory is None:
            return None
        if self._code is None:
            self._code = _code_stamp()
        import hashlib

        key = repr((kind, os.path.realpath(root), sorted(options.items()), self._code))
        return self.directory / f"{kind}-{hashlib.sha256(key.encode()).hexdigest()[:32]}.pickle"

    def load(self, kind: str, root: Path, options: dict[str, Any]) -> Any | None:
        """The stored value if every file and folder it was computed from is unchanged."""
        entry = self.load_entry(kind, root, options)
        return entry[0] if entry is not None else None

    def load_entry(
        self, kind: str, root: Path, options: dict[str, Any]
    ) -> tuple[Any, list[str]] | None:
        """The stored value and the paths it was computed from, if all are unchanged
        (a value grown over runs is stored again with more paths)."""
        path = self._file(kind, root, options)
        if path is None:
            return None
        base = str(Path(os.path.realpath(root)))
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                if hasattr(os, "getuid") and st.st_uid != os.getuid():
                    return None  # written by someone else: not trusted
                head = pickle.load(fh)  # the stamps first: a stale value is never unpickled
                if not isinstance(head, dict) or head.get("format") != FORMAT:
                    return None
                stamps: dict[str, Stamp] = head.get("stamps", {})
                for rel, stamp in stamps.items():
                    if _stamp(os.path.join(base, rel)) != stamp:
                        return None
                value = pickle.load(fh)
        except Exception:  # missing, truncated or from another version: recompute
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: pruned last
        return value, list(stamps)

    def store(
        self, kind: str, root: Path, options: dict[str, Any], value: Any, paths: list[str]
    ) -> None:
        """Keep ``value`` with the state of ``paths`` (tree-relative files and folders)."""
        path = self._file(kind, root, options)
        if path is None:
            return
        base = str(Path(os.path.realpath(root)))
        head = {
            "format": FORMAT,
            "stamps": {rel: _stamp(os.path.join(base, rel)) for rel in dict.fromkeys(paths)},
        }
        try:
            data = pickle.dumps(head, protocol=pickle.HIGHEST_PROTOCOL)
            data += pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
            if len(data) > MAX_ENTRY_BYTES:
                return
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            # a name of this process's own, created exclusively and private (as
            # tempfile.mkstemp does, without importing it and its dependencies)
            tmp = f"{path}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.replace(tmp, path)  # readers see the old entry or the new, never half
            except BaseException:
                os.unlink(tmp)
                raise
            self._prune(path.parent)
        except (OSError, pickle.PicklingError, RecursionError, TypeError):
            return  # a cache that cannot be written only costs time

    @staticmethod
    def _prune(folder: Path) -> None:
        """Keep the :data:`MAX_ENTRIES` most recently used entries."""
        entries = []
        for found in folder.glob("*.pickle"):
            try:
                entries.append((found.stat().st_mtime_ns, found))
            except OSError:
                continue
        for _, stale in sorted(entries, reverse=True)[MAX_ENTRIES:]:
            with contextlib.suppress(OSError):
                stale.unlink()


def add_cache_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="neither use nor keep results of earlier runs on an unchanged tree "
        "(default: off: results are kept)",
    )
    parser.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="where results are kept between runs (default: $SPHINXEXT_ATTN_CACHE_DIR, "
        "else ~/.cache/sphinxext-attn)",
    )


def run_cache(args: argparse.Namespace) -> RunCache:
    if args.no_cache:
        return RunCache(None)
    return RunCache(Path(args.cache_dir) if args.cache_dir else default_dir())


class UnitEntries:
    """The units of one analysis (one tree, one set of options) in one entry: each
    unit valid while the files it read are unchanged, checked one by one."""

    def __init__(self, cache: RunCache, root: Path, options: dict[str, Any]) -> None:
        self.cache = cache
        self.root = root
        self.options = options
        self.base = str(Path(os.path.realpath(root)))
        entry = cache.load_entry("units", root, options) if cache.directory else None
        self.units: dict[str, tuple[dict[str, Stamp], Any]] = (
            entry[0] if entry is not None and isinstance(entry[0], dict) else {}
        )
        self._stamps: dict[str, Stamp] = {}
        self.changed = False

    def _now(self, rel: str) -> Stamp:
        found = self._stamps.get(rel, False)
        if found is False:
            found = self._stamps[rel] = _stamp(os.path.join(self.base, rel))
        return found  # type: ignore[return-value]

    def get(self, key: str) -> Any | None:
        """The unit's value if no file it read has changed since."""
        kept = self.units.get(key)
        if kept is None:
            return None
        stamps, value = kept
        if any(self._now(rel) != stamp for rel, stamp in stamps.items()):
            return None
        return value

    def put(self, key: str, value: Any, paths: list[str]) -> None:
        self.units[key] = ({rel: self._now(rel) for rel in paths}, value)
        self.changed = True

    def save(self) -> None:
        """Write the entry if a unit was computed (stale units are dropped)."""
        if not self.changed or self.cache.directory is None:
            return
        live = {k: v for k, v in self.units.items() if self.get(k) is not None}
        self.cache.store("units", self.root, self.options, live, [])
