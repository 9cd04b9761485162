"""Results kept on disk between command-line runs, valid while the tree is unchanged.

Evaluating every backend class costs about a second on a release; a pre-commit
hook or a script asking again on the same tree should not pay it twice. Like
mypy's and ruff's caches, an entry records the state (size, mtime, inode) of
every file the analysis read and every folder it looked in (a file added there
can change the answer); any difference, a different version of this package,
or another Python makes the entry stale and the work is done again.

The runtime profile is also kept unit by unit (see ``analysis/units.py``): each
backend's answers with the files they read and which of their statements, so
that after an edit only the answers that read a changed statement are asked
again (:class:`UnitEntries`).

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
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sphinxext_attn.analysis.unit_runner import Kept
    from sphinxext_attn.model.plugin import Plugins
    from sphinxext_attn.source.views import Compare, View

#: Bumped when what is stored changes shape.
FORMAT = 6
ENV_DIR = "SPHINXEXT_ATTN_CACHE_DIR"
#: An entry larger than this is not written (a decision map of many thousand cases).
MAX_ENTRY_BYTES = 64 * 1024 * 1024
#: Entries kept; beyond this the least recently used go (trees, versions, options).
MAX_ENTRIES = 48
#: Copies of files kept to compare an edited file with (see :class:`UnitEntries`).
MAX_TEXTS = 2048

Stamp = tuple[int, int, int] | None
#: what an entry is keyed by besides its kind and tree (the options that change it)
Options = Mapping[str, object]


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
    # lazy: hashlib adds 2.3 ms to --help and to a --no-cache run (-X importtime, median of 7)
    import hashlib

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
    """One folder of entries; every method is a no-op when ``directory`` is None.
    ``plugins``: those the run read (``--plugin``), handed to every tree it makes."""

    def __init__(self, directory: Path | None, plugins: Plugins = ()) -> None:
        self.directory = directory
        self.plugins = plugins
        self._code: str | None = None
        #: what this run's analyses parsed, kept alive to the end: the process exits
        #: without freeing it (see ``cli.main.run``)
        self.kept: list[object] = []

    def _file(self, kind: str, root: Path, options: Options) -> Path | None:
        if self.directory is None:
            return None
        if self._code is None:
            self._code = _code_stamp()
        # lazy: as in _code_stamp (2.3 ms)
        import hashlib

        key = repr((kind, os.path.realpath(root), sorted(options.items()), self._code))
        return self.directory / f"{kind}-{hashlib.sha256(key.encode()).hexdigest()[:32]}.pickle"

    def load(self, kind: str, root: Path, options: Options) -> object | None:
        """The stored value if every file and folder it was computed from is unchanged."""
        entry = self.load_entry(kind, root, options)
        return entry[0] if entry is not None else None

    def load_entry(
        self, kind: str, root: Path, options: Options
    ) -> tuple[object, list[str]] | None:
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
        self, kind: str, root: Path, options: Options, value: object, paths: list[str]
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

    def _text_file(self, root: Path, rel: str, stamp: Stamp) -> Path | None:
        if self.directory is None:
            return None
        # lazy: as in _code_stamp (2.3 ms)
        import hashlib

        key = repr((os.path.realpath(root), rel, stamp)).encode()
        return self.directory / "texts" / hashlib.sha256(key).hexdigest()[:32]

    def kept_text(self, root: Path, rel: str, stamp: Stamp) -> bytes | None:
        """The bytes of ``rel`` kept when its stamp was ``stamp`` (None: not kept)."""
        path = self._text_file(root, rel, stamp)
        if path is None:
            return None
        try:
            with open(path, "rb") as fh:
                if hasattr(os, "getuid") and os.fstat(fh.fileno()).st_uid != os.getuid():
                    return None  # written by someone else: not trusted
                data: bytes = fh.read()
        except OSError:
            return None
        return data

    def keep_text(self, root: Path, rel: str, stamp: Stamp, data: bytes) -> None:
        """Keep the bytes of ``rel`` as of ``stamp`` (one file each: an edit run
        reads only the copies of the files that changed, and writes only theirs)."""
        path = self._text_file(root, rel, stamp)
        if path is None or path.exists():
            return
        try:
            path.parent.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            path.parent.mkdir(mode=0o700, exist_ok=True)
            tmp = f"{path}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.replace(tmp, path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            return

    def prune_texts(self) -> None:
        if self.directory is not None and (self.directory / "texts").is_dir():
            self._prune(self.directory / "texts", "*", MAX_TEXTS)

    @staticmethod
    def _prune(folder: Path, pattern: str = "*.pickle", keep: int | None = None) -> None:
        """Keep the ``keep`` (:data:`MAX_ENTRIES`) most recently used entries."""
        keep = MAX_ENTRIES if keep is None else keep
        entries = []
        for found in folder.glob(pattern):
            try:
                entries.append((found.stat().st_mtime_ns, found))
            except OSError:
                continue
        for _, stale in sorted(entries, reverse=True)[keep:]:
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


def run_cache(args: argparse.Namespace, plugins: Plugins = ()) -> RunCache:
    """The run's cache, holding the ``plugins`` it read."""
    # a plugin's files lie outside the root the cache checks its entries' files in:
    # with plugins nothing is kept (an edited plugin file would not be seen)
    if args.no_cache or plugins or getattr(args, "plugin", None):
        return RunCache(None, plugins)
    return RunCache(Path(args.cache_dir) if args.cache_dir else default_dir())


#: a unit kept: the stamps of the files it rests on, the views of each it read, its result
KeptUnit = tuple[dict[str, Stamp], dict[str, "frozenset[View]"], "Kept"]


class UnitEntries:
    """The units of one analysis (one tree, one set of options) in one entry: each
    unit valid while the views of the files it read (``source/views.py``) are
    unchanged, checked one by one. A file whose stamp changed is compared with its
    text when the unit was kept (a copy of each file read is kept beside the
    entries, see :meth:`RunCache.keep_text`): a unit that read none of its
    statements that changed is still valid, so appending a comment to a backend
    file asks nothing again."""

    def __init__(self, cache: RunCache, root: Path, options: Options) -> None:
        self.cache = cache
        self.root = root
        self.options = options
        self.base = str(Path(os.path.realpath(root)))
        entry = cache.load_entry("units", root, options) if cache.directory else None
        kept = entry[0] if entry is not None and isinstance(entry[0], dict) else {}
        #: key -> (stamps of the files it rests on, their views, the unit's Done)
        self.units: dict[str, KeptUnit] = kept.get("units", {})
        #: path -> its stamp when the units were kept (a copy of it is kept then)
        self.texts: dict[str, Stamp] = kept.get("texts", {})
        self._stamps: dict[str, Stamp] = {}
        #: bytes of changed files read to compare them (kept for the next run)
        self._fresh: dict[str, bytes] = {}
        self._compare: Compare | None = None
        self.changed = False

    def _now(self, rel: str) -> Stamp:
        found = self._stamps.get(rel, False)
        if found is False:
            found = self._stamps[rel] = _stamp(os.path.join(self.base, rel))
        return found  # type: ignore[return-value]

    def get(self, key: str) -> Kept | None:
        """The unit's value if no file it read has changed since in a view it read."""
        kept = self.units.get(key)
        if kept is None:
            return None
        stamps, views, value = kept
        changed = [rel for rel, stamp in stamps.items() if self._now(rel) != stamp]
        for rel in changed:
            if self.texts.get(rel, False) != stamps[rel] or self._now(rel) is None:
                return None  # no text to compare with, or the file is gone
            if not self._comparison().same(rel, views.get(rel, ())):
                return None
        if changed:  # valid for the files as they are now
            self.units[key] = ({rel: self._now(rel) for rel in stamps}, views, value)
            self.changed = True
        return value

    def _comparison(self) -> Compare:
        # lazy: a kept page run loads this module and no source module but locate
        # (tests/cli/test_runcache.py); source.tree alone costs 12 ms (-X importtime, median of 7)
        from sphinxext_attn.source.recording import decode_source
        from sphinxext_attn.source.tree import SourceTree
        from sphinxext_attn.source.views import Compare

        if self._compare is None:
            reader = SourceTree(self.base, plugins=self.cache.plugins)

            def old(rel: str) -> str | None:
                data = self.cache.kept_text(self.root, rel, self.texts[rel])
                try:
                    return decode_source(data) if data is not None else None
                except (SyntaxError, LookupError, UnicodeDecodeError):
                    return None

            def new(rel: str) -> str | None:
                text = reader.text(rel)
                self._fresh.update(reader.read_bytes())
                return text

            self._compare = Compare(old, new)
        return self._compare

    def _read(self, rel: str) -> bytes | None:
        # lazy: as in _comparison (source.tree: 12 ms)
        from sphinxext_attn.source.tree import SourceTree

        reader = SourceTree(self.base, plugins=self.cache.plugins)
        reader.text(rel)
        return reader.read_bytes().get(rel)

    def put(self, key: str, done: Kept) -> None:
        paths = done.depends_on()
        self.units[key] = ({rel: self._now(rel) for rel in paths}, dict(done.views), done)
        self.changed = True

    def save(self, read: dict[str, bytes]) -> None:
        """Write the entry if a unit was computed or kept for edited files (stale
        units are dropped), with the texts of the files they read (``read``: the
        bytes this run read)."""
        if not self.changed or self.cache.directory is None:
            return
        live = {k: v for k, v in self.units.items() if self.get(k) is not None}
        texts: dict[str, Stamp] = {}
        wrote = False
        for rel in sorted({rel for stamps, views, _ in live.values() for rel in views}):
            now = self._now(rel)
            if self.texts.get(rel, False) == now:
                texts[rel] = now  # its copy is kept already
                continue
            data = read.get(rel, self._fresh.get(rel))
            data = data if data is not None else self._read(rel)  # read in a forked child
            if data is not None and now is not None:
                self.cache.keep_text(self.root, rel, now, data)
                texts[rel], wrote = now, True
        self.cache.store("units", self.root, self.options, {"units": live, "texts": texts}, [])
        if wrote:
            self.cache.prune_texts()
