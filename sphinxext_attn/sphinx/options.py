"""Option converters of the directive family.

Values that can be checked without the tree are checked here, by docutils
option converters whose messages list the allowed values; the rest wait
for the analysis (see :mod:`.directives`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from docutils.parsers.rst import directives

from sphinxext_attn.model.environment import (
    PLATFORM_PATTERN,
    EnvironmentError_,
    check_setting,
    known_platforms,
    parse_assignments,
)


def _split(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def columns_option(allowed: Sequence[str]) -> Callable[[str], tuple[str, ...]]:
    """A converter for ``:columns:`` that names the allowed columns on error."""
    by_lower = {a.lower(): a for a in allowed}

    def convert(value: str) -> tuple[str, ...]:
        names = _split(value or "")
        if not names:
            raise ValueError(f"no columns given; choose from {', '.join(allowed)}")
        out = []
        for name in names:
            canon = by_lower.get(name.lower())
            if canon is None:
                raise ValueError(f"unknown column {name!r}; choose from {', '.join(allowed)}")
            if canon in out:
                raise ValueError(f"column {canon!r} given twice")
            out.append(canon)
        return tuple(out)

    return convert


def choices_option(allowed: Sequence[str]) -> Callable[[str], tuple[str, ...]]:
    """Comma-separated values, each one of ``allowed``."""

    def convert(value: str) -> tuple[str, ...]:
        names = _split(value or "")
        bad = [n for n in names if n not in allowed]
        if bad or not names:
            raise ValueError(
                f"{', '.join(bad) or 'nothing'} unknown; choose from {', '.join(allowed)}"
            )
        return tuple(names)

    return convert


def one_of(allowed: Sequence[str]) -> Callable[[str], str]:
    """A single value, one of ``allowed`` (the message lists them)."""

    def convert(value: str) -> str:
        word = (value or "").strip().lower()
        if word not in allowed:
            raise ValueError(f"{word or 'nothing'!r} unknown; choose from {', '.join(allowed)}")
        return word

    return convert


#: architecture names as the code tells GPUs apart (for messages)
ARCH_EXAMPLES = ("sm80", "sm90", "sm100", "sm120", "default")


def arch_option(value: str) -> tuple[str, ...]:
    """Architectures as the release's code tells them apart (``sm90``, ``sm100``,
    ``default``, ...); checked against the tree's lists when the table renders."""
    names = _split(value or "")
    bad = [n for n in names if not re.fullmatch(r"default|sm\d+(\+sm\d+)*|gfx[0-9a-f]{2,4}", n)]
    if bad or not names:
        raise ValueError(
            f"{', '.join(bad) or 'nothing'} is not an architecture; use names such as "
            f"{', '.join(ARCH_EXAMPLES)}"
        )
    return tuple(names)


def widths_option(value: str) -> str | list[int]:
    try:
        widths: str | list[int] = directives.value_or(
            ("auto", "grid"),
            directives.positive_int_list,  # type: ignore[arg-type]  # the stub types value_or too narrowly
        )(value)
    except ValueError as err:
        raise ValueError(f"{err}; give auto, grid or a list of positive integers") from None
    return widths


def backends_option(value: str) -> tuple[str, ...]:
    names = _split(value or "")
    if not names:
        raise ValueError("give comma-separated backend names")
    return tuple(names)


def profile_option(value: str | None) -> str:
    choice = (value or "").strip()
    if choice not in ("runtime", "vllm-page"):
        raise ValueError("give runtime or vllm-page")
    return choice


def assignments_option(kind: str) -> Callable[[str], dict[str, str]]:
    """``:env:``, ``:option:``, ``:assume:``: ``NAME=VALUE, ...``, names checked."""

    def convert(value: str) -> dict[str, str]:
        try:
            found = parse_assignments(value or "", f":{kind}:")
            check_setting(ENVIRONMENT_FIELDS[kind], found, f":{kind}:")
        except EnvironmentError_ as err:
            raise ValueError(f"{err}; give NAME=VALUE, ...") from None
        if not found:
            raise ValueError(f"give NAME=VALUE, ... for :{kind}:")
        return found

    return convert


def platforms_option(value: str) -> tuple[str, ...]:
    """Comma-separated platform names: vLLM's, or names a plugin's may have (checked
    against the build's plugins when the directive runs)."""
    names = _split(value or "")
    bad = [n for n in names if n not in known_platforms() and not PLATFORM_PATTERN.match(n)]
    if bad or not names:
        raise ValueError(
            f"{', '.join(bad) or 'nothing'} unknown; choose from {', '.join(known_platforms())}"
        )
    return tuple(names)


def gfx_option(value: str | None) -> str:
    text = (value or "").strip().lower()
    if not re.fullmatch(r"gfx[0-9a-f]{2,4}", text):
        raise ValueError(f"{text or 'nothing'} is not a ROCm GPU; give e.g. gfx942")
    return text


def platform_option(value: str | None) -> str:
    """One of vLLM's platforms or a name a plugin's may have (checked against the
    build's plugins when the directive runs)."""
    choice = (value or "").strip().lower()
    if choice not in known_platforms() and not PLATFORM_PATTERN.match(choice):
        raise ValueError(
            f"give one of {', '.join(known_platforms())} (a plugin's platform needs the "
            "plugin in attention_backends_plugins)"
        )
    return choice


#: directive option -> the argument of ``environment_from`` it sets
ENVIRONMENT_FIELDS = {"env": "env", "option": "options", "assume": "assume"}

COMMON_OPTIONS = {
    "env": assignments_option("env"),
    "option": assignments_option("option"),
    "assume": assignments_option("assume"),
    "platform": platform_option,
    "root": directives.unchanged_required,
    "profile": profile_option,
    "backends": backends_option,
    "class": directives.class_option,
    "name": directives.unchanged,
    "caption": directives.unchanged_required,
    "widths": widths_option,
    "source-url": directives.unchanged,
}
