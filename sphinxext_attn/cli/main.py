"""Command line: write the tables as the seed's markdown page or as JSON.

``--check`` and the trailing ``FILES`` behave as in vLLM's pre-commit hook:
with files given and none relevant, do nothing; with ``--check``, rewrite an
out-of-date output and exit 1.
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import gc
import os
import sys
from dataclasses import replace
from pathlib import Path, PurePosixPath

from sphinxext_attn.cli import pagefile
from sphinxext_attn.cli.checks import (
    BadInput,
    OneLineParser,
    check_engine_options,
    check_output,
    check_root,
    check_source_links,
    check_template,
    root_or_report,
    write_output,
)
from sphinxext_attn.cli.environment_flags import (
    EnvironmentError_,
    add_environment_options,
    check_platforms,
    environment_of,
    page_platforms,
    read_plugin_flags,
)
from sphinxext_attn.cli.runcache import RunCache, UnitEntries, add_cache_options, run_cache
from sphinxext_attn.model.environment import REFERENCE, Environment
from sphinxext_attn.model.key import AnalysisKey
from sphinxext_attn.model.plugin import Plugins
from sphinxext_attn.model.records import Analysis, Diagnostic
from sphinxext_attn.render import markers
from sphinxext_attn.render.markdown import (
    TEMPLATE_ERRORS,
    fill_markers,
    header_from_template,
    render_markdown,
)
from sphinxext_attn.vocab.paths import PAGE_FILE, RELEVANT_PATTERNS

DEFAULT_OUTPUT = PAGE_FILE


def is_relevant(path: str, root: Path) -> bool:
    p = Path(path)
    if p.is_absolute():
        try:
            p = p.resolve().relative_to(root.resolve())
        except ValueError:
            return False
    text = PurePosixPath(p.as_posix()).as_posix()
    return any(fnmatch.fnmatch(text, pat) for pat in RELEVANT_PATTERNS)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="sphinxext-attn",
        description="Write vLLM's attention-backend feature tables from a source tree.",
    )
    parser.add_argument(
        "--root",
        help="vLLM source tree (the folder holding vllm/); default: the current folder if "
        "it holds vllm/, else the installed vllm distribution (not imported)",
    )
    parser.add_argument(
        "--profile",
        choices=("runtime", "vllm-page"),
        default="runtime",
        help="runtime: what the classes answer; vllm-page: what vLLM's own generator writes "
        "(default: runtime)",
    )
    parser.add_argument(
        "-o", "--output", help=f"output file (default: ROOT/{DEFAULT_OUTPUT}; - for stdout)"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 (and rewrite) if the output is stale (default: off: just write)",
    )
    parser.add_argument(
        "--format",
        choices=("markdown", "json"),
        default="markdown",
        help="markdown: vLLM's page; json: the analysis as data (default: markdown)",
    )
    parser.add_argument(
        "--template",
        help="markdown file whose text above the tables is kept, or whose vLLM gen: markers "
        "are filled (default: a short header; with --check, the existing output)",
    )
    parser.add_argument(
        "--fill-markers",
        action="store_true",
        help='vllm-page: fill the --8<-- "gen:KEY" markers of vLLM\'s page (0.27 on; '
        f"--template, default ROOT/{DEFAULT_OUTPUT}) as the release's generator does "
        "(default: off)",
    )
    parser.add_argument(
        "--source-links",
        metavar="URL_TEMPLATE",
        help="link each feature cell to its source line: a template with {path}, {line} "
        "and {version} (markdown only; off by default)",
    )
    parser.add_argument(
        "--diff",
        metavar="OLD_ROOT",
        help="write what changed from the tree OLD_ROOT to --root instead of the tables "
        "(to stdout unless -o is given; default: off)",
    )
    add_cache_options(parser)
    add_environment_options(parser, many=True)
    parser.add_argument(
        "files",
        nargs="*",
        help="changed files (pre-commit); skip if none is relevant (default: none: always run)",
    )
    return parser


def analysis_of(
    root: Path,
    profile: str,
    provenance: bool,
    cache: RunCache,
    extras: bool = True,
    environment: Environment = REFERENCE,
) -> Analysis:
    """The tree's analysis: kept from an earlier run if no file it read has changed."""
    options: dict[str, object] = {"profile": profile, "provenance": provenance, "extras": extras}
    if not environment.is_reference():
        options["environment"] = environment.key()
    analysis = cache.load("analysis", root, options)
    if isinstance(analysis, Analysis):
        return analysis
    # Loaded only when the cache does not answer: a cached run loads none of the
    # analysis modules (tests/cli/test_runcache.py lists the modules it loads); the
    # pipeline costs 38 ms (python -X importtime, median of 7)
    from sphinxext_attn.analysis import analyze
    from sphinxext_attn.source.tree import SourceTree

    plugins = cache.plugins
    key = AnalysisKey(
        str(root), profile, environment, provenance=provenance, extras=extras, plugins=plugins
    )
    # the runtime profile keeps its units: a run asks again only what read a changed file
    units = UnitEntries(cache, root, options) if profile == "runtime" and cache.directory else None
    tree = SourceTree(root, plugins=plugins)
    analysis = analyze(key, source=tree, parallel=True, store=units, keep=cache.kept)
    if units is not None:
        units.save(tree.read_bytes())
    cache.store("analysis", root, options, analysis, [*analysis.files, *analysis.directories])
    return analysis


def platform_part(
    root: Path, environment: Environment, platform: str, cache: RunCache
) -> Analysis:
    """Another platform's section of the page (its selection and feature rows):
    kept from an earlier run if no file it read has changed."""
    wanted = replace(environment, platform=platform)
    options = {"profile": "platform:features", "environment": wanted.key()}
    found = cache.load("platform", root, options)
    if isinstance(found, Analysis):
        return found
    # lazy: as in analysis_of (the pipeline: 38 ms)
    from sphinxext_attn.analysis import analyze

    key = AnalysisKey(str(root), "runtime", wanted, "features", plugins=cache.plugins)
    part = analyze(key, keep=cache.kept)
    cache.store("platform", root, options, part, [*part.files, *part.directories])
    return part


#: the subcommands (the page command has none)
COMMANDS = ("select", "fetch")


def unknown_command(argv: list[str]) -> str | None:
    """A first word that is neither an option nor an existing file (the pre-commit
    hook passes existing files) is a mistyped command, not a file to filter."""
    first = argv[0] if argv else ""
    if not first or first.startswith("-") or os.path.exists(first):
        return None
    if "/" in first or "." in first:  # a path: a deleted file is still a file name
        return None
    close = difflib.get_close_matches(first, COMMANDS, 1, 0.5)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return (
        f"unknown command {first!r}{hint}; the commands are {', '.join(COMMANDS)}, and the "
        "page command takes flags and existing FILES"
    )


def plugin_diagnostics(plugins: Plugins, sections: list[Analysis]) -> list[Diagnostic]:
    """The platform sections' warnings about a plugin's files (those about vLLM's own
    are the page's)."""
    if not sections:
        return []
    packages = {p for plugin in plugins for p in plugin.packages}
    found = [
        d
        for s in sections
        for d in s.diagnostics
        if d.location and d.location.path.split("/", 1)[0] in packages
    ]
    return list(dict.fromkeys(found))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["select"]:
        # lazy: the select command loads the evaluator, 146 ms (python -X importtime, median of 7)
        from sphinxext_attn.cli.select import main as select_main

        return select_main(argv[1:])
    if argv[:1] == ["fetch"]:
        # lazy: the fetch command loads urllib and tarfile, 31 ms (-X importtime, median of 7)
        from sphinxext_attn.cli.fetch import main as fetch_main

        return fetch_main(argv[1:])
    typo = unknown_command(argv)
    if typo:
        print(f"sphinxext-attn: {typo}", file=sys.stderr)
        return 2
    args = build_parser().parse_args(argv)
    try:
        return write_page(args)
    except (BadInput, EnvironmentError_) as exc:
        print(f"sphinxext-attn: {exc}", file=sys.stderr)
        return 2


def write_page(args: argparse.Namespace) -> int:
    """The page (or the JSON, or the diff) the checked flags ask for."""
    args.root = root_or_report(args.root, "sphinxext-attn")
    if args.root is None:
        return 2
    root = Path(args.root)
    plugins = read_plugin_flags(args, args.root) if root.is_dir() else ()
    check_platforms(page_platforms(args), plugins)
    environment = environment_of(args, plugins)
    if args.files and not any(is_relevant(f, root) for f in args.files):
        return 0
    check_root(args.root)
    check_engine_options(args.root, environment)
    check_output(args.output)
    if args.diff:
        check_root(args.diff, "--diff")
        check_engine_options(args.diff, environment)
    check_template(args.template)
    check_source_links(args.source_links)
    if args.fill_markers and args.profile != "vllm-page":  # said before the analysis runs
        raise BadInput("--fill-markers needs --profile vllm-page")
    out = pagefile.output_path(args.output, args.diff, root, DEFAULT_OUTPUT)
    if out is not None:  # a page holding vLLM's gen: markers is never written over
        markdown_check = args.check and args.format == "markdown" and not args.diff
        status = pagefile.marker_page(out, root, markdown_check)
        if status is not None:
            return status
    # a markdown page without source links shows no cell's deciding line
    wants_lines = args.format == "json" or bool(args.source_links) or bool(args.diff)
    # nor any capability outside the release's page columns (JSON and diffs list them)
    extras = args.format == "json" or bool(args.diff)
    # vLLM's layout is CUDA's; another platform adds its own section (markdown)
    page_environment = Environment(
        environment.env, environment.options, environment.assume, "cuda", ""
    )
    cache = run_cache(args, plugins)
    analysis = analysis_of(root, args.profile, wants_lines, cache, extras, page_environment)
    for diag in analysis.diagnostics:
        print(f"{'note' if diag.release else 'warning'}: {diag}", file=sys.stderr)
    if args.diff:
        return write_diff(args, analysis, cache)
    # each other platform asked for: its own analysis, of what its section shows
    platforms = page_platforms(args)
    if platforms and args.profile == "vllm-page":
        print(
            "sphinxext-attn: note: vLLM's page (--profile vllm-page) has no section for "
            f"{', '.join(platforms)}; none is added",
            file=sys.stderr,
        )
        platforms = []
    sections = [platform_part(root, environment, p, cache) for p in platforms]
    for diag in plugin_diagnostics(plugins, sections):
        print(f"warning: {diag}", file=sys.stderr)
    if args.format == "json":
        # lazy: a renderer is loaded by its format alone; jsonout: 2.6 ms (-X importtime,
        # median of 7) on every Markdown run otherwise
        from sphinxext_attn.render.jsonout import render_json

        content = render_json(analysis, sections)
    else:
        page = page_content(args, analysis, root, out)
        if page is None:
            return 2
        content = page
        if sections:
            # lazy: platform_section loads docutils, 6.5 ms on a page run without sections
            # (-X importtime, median of 7)
            from sphinxext_attn.render.platform_section import markdown_section

            parts = [content.rstrip("\n"), *(markdown_section(s).rstrip("\n") for s in sections)]
            content = "\n\n".join(parts) + "\n"
    if out is None:
        sys.stdout.write(content)
        return 0
    if args.check:
        current = out.read_text(encoding="utf-8") if out.exists() else None
        if current == content:
            print(f"Up to date: {out}")
            return 0
        write_output(out, content)
        print(f"Regenerated: {out}")
        return 1
    write_output(out, content)
    print(f"Generated: {out}")
    return 0


def page_content(
    args: argparse.Namespace, analysis: Analysis, root: Path, out: Path | None
) -> str | None:
    """The markdown page: a template's markers filled (vllm-page), or the tables under
    the template's prose; None after saying why on stderr."""
    template = None
    path = pagefile.template_path(args.template, args.fill_markers, args.check, out, root)
    if path is not None:
        template = pagefile.read_text(path)
        if template is None:
            print(f"sphinxext-attn: cannot read template {path}", file=sys.stderr)
            return None
    if template is not None and args.profile == "vllm-page" and markers.has_markers(template):
        try:
            return fill_markers(template, analysis)
        except markers.MarkerError as exc:
            print(f"sphinxext-attn: {path}: {exc}", file=sys.stderr)
            return None
    header = header_from_template(template) if template is not None else None
    try:
        return render_markdown(analysis, header, args.source_links)
    except TEMPLATE_ERRORS as exc:
        print(f"sphinxext-attn: bad --source-links template: {exc!r}", file=sys.stderr)
        return None


def write_diff(args: argparse.Namespace, new: Analysis, cache: RunCache) -> int:
    """``--diff OLD_ROOT``: the changes from OLD_ROOT to ``--root``, markdown or JSON
    (the plugins given are the new tree's: read with the old one if it is the same)."""
    old_root = check_root(args.diff, "--diff")
    same = os.path.realpath(old_root) == os.path.realpath(args.root)
    old_cache = cache if same or not cache.plugins else run_cache(args)
    old_env = environment_of(args, cache.plugins)
    old = analysis_of(old_root, args.profile, True, old_cache, True, old_env)
    for diag in old.diagnostics:  # labelled as the new tree's are
        print(f"{'note' if diag.release else 'warning'}: {diag}", file=sys.stderr)
    # lazy: diffout costs 4.0 ms (python -X importtime, median of 7), for --diff alone
    from sphinxext_attn.render.diffout import render_diff_json, render_diff_markdown

    content = (
        render_diff_json(old, new) if args.format == "json" else render_diff_markdown(old, new)
    )
    if args.output and args.output != "-":
        write_output(Path(args.output), content)
        print(f"Generated: {args.output}")
    else:
        sys.stdout.write(content)
    return 0


def run() -> None:
    """Console entry point: exit without tearing the interpreter down.

    Freeing the parsed trees object by object costs more than writing the
    page; like mypy, the command line hands its memory back to the OS instead.
    """
    gc.disable()  # a short run: nothing to gain from rescanning the parsed trees
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
