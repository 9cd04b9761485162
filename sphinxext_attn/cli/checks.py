"""Command-line input, checked before any work: one line and exit 2 for a bad value.

The values of a configuration are checked by the converters the directives
use (:mod:`sphinxext_attn.selection.inputs`); here they become argparse types,
and the paths (``--root``, ``-o``, ``--cases``) are checked for what a run
needs of them. Every message names the flag, the value and what is accepted.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TypeVar

from sphinxext_attn.model.environment import Environment
from sphinxext_attn.render.markdown import TEMPLATE_ERRORS
from sphinxext_attn.source.locate import default_root
from sphinxext_attn.vocab.paths import (
    BACKENDS_DIR,
    CUDA_PLATFORM_FILE,
    OLD_BACKENDS_DIR,
    REGISTRY_FILES,
)

#: the files (and folders) the tables are read from: the registry, the backends and
#: the CUDA priority lists
TABLE_SOURCES = (*REGISTRY_FILES, BACKENDS_DIR, OLD_BACKENDS_DIR, CUDA_PLATFORM_FILE)


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (no usage block) and exit 2."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: {message} (see --help)", file=sys.stderr)
        raise SystemExit(2)


T = TypeVar("T")


def flag_type(convert: Callable[[str], T]) -> Callable[[str], T]:
    """A shared converter as an argparse ``type`` (its message, not argparse's)."""

    def checked(value: str) -> T:
        try:
            return convert(value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    checked.__name__ = convert.__name__
    return checked


class BadInput(Exception):
    """A value the run cannot use; the message is the whole line to print."""


def check_root(root: str, flag: str = "--root") -> Path:
    """A folder holding ``vllm/``; two messages for a path that is not there and
    one that is no vLLM tree."""
    path = Path(root)
    if not path.exists():
        raise BadInput(f"{flag} {root}: no such folder")
    if not path.is_dir():
        raise BadInput(f"{flag} {root}: not a folder; give the folder holding vllm/")
    if not (path / "vllm").is_dir():
        raise BadInput(
            f"{flag} {root}: not a vLLM tree (it holds no vllm/ package); give the folder "
            "holding vllm/, e.g. a checkout or site-packages"
        )
    # a tree missing some of them still gives the tables it can (with a warning each)
    if not any((path / rel).exists() for rel in TABLE_SOURCES):
        raise BadInput(
            f"{flag} {root}: its vllm/ holds none of the files any table is read from "
            f"({', '.join(TABLE_SOURCES)}); give a whole vLLM tree"
        )
    return path


def check_engine_options(root: str | Path, environment: Environment) -> None:
    """``--option``: fields the tree's own ``VllmConfig`` has, with values they allow."""
    if not environment.options:
        return
    # lazy: option_fields loads source and pyeval modules (34 ms, -X importtime, median
    # of 7), which tests/cli/test_runcache.py keeps out of a kept page run
    from sphinxext_attn.selection.option_fields import OptionError, check_options

    try:
        check_options(str(root), environment.options)
    except OptionError as exc:
        raise BadInput(str(exc)) from None


def check_output(output: str | None, flag: str = "-o") -> None:
    """An output file that can be written (``-`` is stdout): not a folder, and in a
    folder that exists (or can be made) and may be written."""
    if not output or output == "-":
        return
    path = Path(output)
    if path.is_dir():
        raise BadInput(f"{flag} {output}: is a folder; give a file path (or - for stdout)")
    if path.exists() and not os.access(path, os.W_OK):
        raise BadInput(f"{flag} {output}: not writable; give a file you may write")
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise BadInput(f"{flag} {output}: {parent} is not a folder; give a file path")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise BadInput(f"{flag} {output}: the folder {parent} is not writable")


def check_template(template: str | None) -> None:
    """``--template``: a file that can be read as text."""
    if template is None:
        return
    try:
        Path(template).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise BadInput(f"--template {template}: cannot read: {why or exc}") from None


def check_source_links(template: str | None) -> None:
    """``--source-links``: a format string of ``{path}``, ``{line}`` and ``{version}``."""
    if not template:
        return
    try:
        template.format(path="vllm/x.py", line=1, version="0.0.0")
    except TEMPLATE_ERRORS as exc:
        raise BadInput(
            f"--source-links {template}: not a template ({exc!r}); use the fields "
            "{path}, {line} and {version}"
        ) from None


def write_output(path: Path, content: str, flag: str = "-o") -> None:
    """Write ``content``; a failure (read-only file system, full disk) is :class:`BadInput`."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"{flag} {path}: cannot write: {exc.strerror or exc}") from None


def root_or_report(root: str | None, prog: str) -> str | None:
    """``--root`` if given, else the tree found as the extension finds it (named
    on stderr); None, after saying why on stderr, when there is none."""
    if root is not None:
        return root
    found, how = default_root()
    if found is None:
        print(f"{prog}: no vLLM tree: {how} (use --root)", file=sys.stderr)
        return None
    print(f"{prog}: using the vLLM tree {found} ({how})", file=sys.stderr)
    return found


__all__ = [
    "BadInput",
    "OneLineParser",
    "check_engine_options",
    "check_output",
    "check_root",
    "check_source_links",
    "check_template",
    "flag_type",
    "root_or_report",
    "write_output",
]
