"""``sphinxext-attn fetch VERSION``: a vLLM release's source tree in the cache, for
``--root`` and ``attention_backends_root`` (nothing is built or run)."""

from __future__ import annotations

import sys
from pathlib import Path

from sphinxext_attn.cli.checks import OneLineParser, flag_type
from sphinxext_attn.source.fetch import FetchError, cache_dir, check_version, fetch


def main(argv: list[str]) -> int:
    """``fetch VERSION``: the release's source tree in the cache; its path on stdout."""
    parser = OneLineParser(
        prog="sphinxext-attn fetch",
        description="Fetch a vLLM release's source tree (its sdist from the package index "
        "pip uses; nothing is built or run) into the cache and print its path.",
    )
    parser.add_argument(
        "version", type=flag_type(check_version), help="the release, e.g. 0.33.0 (no default)"
    )
    parser.add_argument(
        "--dest",
        help=f"the cache folder (default: $VLLM_TREES, else {cache_dir()})",
    )
    args = parser.parse_args(argv)
    try:
        tree = fetch(args.version, Path(args.dest) if args.dest else None)
    except FetchError as exc:
        print(f"sphinxext-attn fetch: vllm=={args.version}: {exc}", file=sys.stderr)
        return 1
    print(tree)
    return 0
