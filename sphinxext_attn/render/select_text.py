"""A selection decision as text for people (``select --format text``): the
configuration, the pick, what vLLM does with a backend asked for, and one label
per backend of the list with its reasons and their places."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sphinxext_attn.model.selection import (
    Alternative,
    Candidate,
    Config,
    Decision,
    request_summary,
)


def alternative_parts(alternative: Alternative) -> tuple[str, str]:
    """The flags of one alternative (``--env VLLM_HAS_FLASHINFER_CUBIN=1``) and vLLM's
    pick with them."""
    flags = [
        f"without --env {name}" if value == "unset" else f"--{kind} {name}={value}"
        for kind, given in (
            ("env", alternative["env"]),
            ("option", alternative["option"]),
            ("assume", alternative["assume"]),
        )
        for name, value in given.items()
    ]
    return " ".join(flags), alternative["selected"] or "none (vLLM raises)"


def describe(alternative: Alternative) -> str:
    """``with --env VLLM_HAS_FLASHINFER_CUBIN=1: FLASHINFER``."""
    flags, pick = alternative_parts(alternative)
    return f"with {flags}: {pick}"


def _shown(value: object, flag: str, defaults: Mapping[str, object]) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return str(defaults[flag]) if flag in defaults else "none"
    return str(value).lower() if flag == "attn-type" else str(value)


def _candidate(candidate: Candidate) -> str:
    """A candidate's backend, with its class where a plugin's names collide, or what
    vLLM raises."""
    if candidate.get("raised"):
        return f"none (vLLM raises {candidate['raised']})"
    path = candidate.get("class_path")
    return f"{candidate['backend']} ({path})" if path else str(candidate["backend"])


def render_text(
    config: Config,
    decision: Decision,
    configuration: dict[str, Any] | None = None,
    gpu: str = "",
    alternatives: list[Alternative] | None = None,
    unset_words: Mapping[str, object] | None = None,
) -> str:
    """The decision for people: the configuration (defaults marked; ``unset_words``:
    what an unset flag means, in words), the pick, and one label for every backend
    of the list."""
    lines = [f"configuration: {config.describe(gpu)}"]
    if configuration is not None:
        defaults = set(configuration["defaults"])
        for flag, value in configuration["values"].items():
            mark = "  (default)" if flag in defaults else ""
            label = f"{flag}:" if flag != "derived_capability" else "capability:"
            shown = _shown(value, flag, unset_words or {})
            if flag == "derived_capability":
                shown += f" (derived from {configuration['values'].get('arch')})"
            lines.append(f"  {label:16}{shown}{mark}")
    if decision.error:
        lines.append(f"not evaluated: {decision.error}")
        return "\n".join(lines) + "\n"
    if decision.requested is not None:
        lines += request_summary(decision)
    if decision.refused:
        lines.append(f"selected: none (vLLM raises {decision.refused})")
    elif decision.candidates and decision.selected:
        lines.append(f"selected: {decision.selected} (from a list that depends on a fact)")
        lines += [f"  {_candidate(c)} if {c['if']}" for c in decision.candidates]
    elif decision.candidates:
        lines.append("selected: conditional (the code cannot settle it statically)")
        lines += [f"  {_candidate(c)} if {c['if']}" for c in decision.candidates]
    elif decision.raised:
        lines.append(f"selected: none (vLLM raises {decision.raised})")
    else:
        lines.append(f"selected: {decision.selected or 'none (vLLM raises: no valid backend)'}")
    if decision.class_path:
        lines.append(f"class: {decision.class_path}")
    if decision.flash_attn_version is not None and decision.flash_attn_source:
        phase = " decode" if config.use_mla else ""
        lines.append(
            f"FlashAttention: FA{decision.flash_attn_version} ({decision.selected}'s{phase} "
            f"kernel call passes fa_version={decision.flash_attn_version}, "
            f"{decision.flash_attn_source})"
        )
    elif decision.flash_attn_version is not None:
        lines.append(
            f"FlashAttention: FA{decision.flash_attn_version} ({decision.selected} runs it)"
        )
    if decision.assumptions:
        lines.append(f"assuming: {', '.join(decision.assumptions)}")
    lines += [describe(alternative) for alternative in alternatives or []]
    for candidate in decision.candidates:
        if candidate.get("priorities"):
            lines.append(f"priority list if {candidate['if']}:")
            lines += [f"    {i}. {n}" for i, n in enumerate(candidate["priorities"], 1)]
    if not decision.priorities and any(c.get("priorities") for c in decision.candidates):
        return "\n".join(lines) + "\n"
    lines.append("priority list:")
    for i, name in enumerate(decision.priorities, 1):
        mark = "->" if name == decision.selected else "  "
        why = ""
        if name in decision.rejected:
            sources = decision.sources.get(name, [])
            why = ": " + "; ".join(
                f"{reason} ({where})" if where else reason
                for reason, where in zip(
                    decision.rejected[name],
                    [*sources, *[""] * len(decision.rejected[name])],
                    strict=False,
                )
            )
        elif name in decision.unknown:
            why = ": " + decision.unknown[name]
        lines.append(f" {mark} {i}. {name}  {decision.label(name)}{why}")
    return "\n".join(lines) + "\n"
