"""The values of a configuration, checked once for every way they come in.

The select directives' options, ``select``'s flags and the cases of a
``--cases`` file all go through the converters here, so a bad value gets the
same message everywhere: the value and what is accepted (the caller adds the
option, flag or case key). A converter raises :class:`ValueError`; nothing
here knows of docutils or argparse.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from sphinxext_attn.model.environment import PLATFORMS
from sphinxext_attn.vocab.names import ATTN_TYPES, DTYPE_NAMES


def _text(value: object) -> str:
    return "" if value is None else str(value).strip()


def capability(value: object) -> str:
    """A compute capability ``MAJOR.MINOR`` (``9.0``, ``12.1``)."""
    text = _text(value)
    if not re.fullmatch(r"\d{1,2}\.\d", text):
        raise ValueError(
            f"{text or 'nothing'!r} is not a compute capability; give MAJOR.MINOR, "
            "e.g. 9.0 or 12.0"
        )
    return text


def dtype(value: object) -> str:
    text = _text(value).lower()
    if text not in DTYPE_NAMES:
        raise ValueError(f"{text or 'nothing'!r} unknown; choose from {', '.join(DTYPE_NAMES)}")
    return text


def kv_cache_dtype(value: object) -> str:
    """A KV cache dtype name (which ones the release accepts: :func:`check_kv_cache_dtype`)."""
    text = _text(value)
    if not re.fullmatch(r"[A-Za-z0-9_]+", text):
        raise ValueError(
            f"{text or 'nothing'!r} is not a KV cache dtype; give one such as auto, fp8 "
            "or bfloat16"
        )
    return text


def check_kv_cache_dtype(value: str | None, accepted: tuple[str, ...]) -> None:
    """``value`` must be one of the release's ``CacheDType`` (``accepted``)."""
    if value is not None and accepted and value not in accepted:
        raise ValueError(
            f"{value!r} is not a KV cache dtype of this release; choose from {', '.join(accepted)}"
        )


def attn_type(value: object) -> str:
    text = _text(value).upper().replace("-", "_")
    if text not in ATTN_TYPES:
        raise ValueError(
            f"{_text(value) or 'nothing'!r} unknown; choose from "
            f"{', '.join(t.lower().replace('_', '-') for t in ATTN_TYPES)}"
        )
    return text


def backend_name(value: object) -> str:
    """A registry name (``FLASH_ATTN``; case does not matter)."""
    text = _text(value).upper()
    if not re.fullmatch(r"[A-Z][A-Z0-9_]{0,63}", text):
        raise ValueError(
            f"{_text(value) or 'nothing'!r} is not a backend name; give a registry name "
            "such as FLASH_ATTN"
        )
    return text


def positive_int(value: object) -> int:
    """A whole number above zero (``"128"`` or ``128``; never a bool)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"{value!r} is not a positive integer")
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a positive integer") from None
    if number <= 0:
        raise ValueError(f"{value!r} is not a positive integer (give 1 or more)")
    return number


def platform(value: object) -> str:
    text = _text(value)
    if text not in PLATFORMS:
        raise ValueError(f"{text or 'nothing'!r} unknown; choose from {', '.join(PLATFORMS)}")
    return text


def arch(value: object) -> str:
    """A ROCm GPU by its arch name (``gfx942``)."""
    text = _text(value).lower()
    if not re.fullmatch(r"gfx[0-9a-f]+", text):
        raise ValueError(f"{text or 'nothing'!r} is not a GPU arch; give one such as gfx942")
    return text


def backend(value: object) -> str:
    """A backend's name as vLLM's enum spells it (which ones the release has:
    :func:`sphinxext_attn.selection.requested.check_backend`)."""
    text = _text(value)
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text):
        raise ValueError(
            f"{text or 'nothing'!r} is not a backend name; give one such as FLASH_ATTN"
        )
    return text


def backend_request(value: object) -> tuple[str, str]:
    """``NAME`` (every layer) or ``KIND=NAME`` (layers of one KV-cache kind, as
    ``attention_config.backend_per_kind`` asks): (kind or "", name)."""
    text = _text(value)
    kind, sep, name = text.rpartition("=")
    if sep and not re.fullmatch(r"[a-z_][a-z0-9_]*", kind):
        raise ValueError(f"{kind!r} is not a KV-cache kind; give one such as mla_attention")
    return kind, backend(name)


# -- the values of a ``--cases`` file (JSON: types are checked, not converted) -------
def boolean(value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{value!r} is not true or false")
    return value


def optional(check: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``check``, or null."""

    def convert(value: object) -> Any:
        return None if value is None else check(value)

    return convert


def string(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a string")
    return value


def mapping(value: object) -> dict[str, Any]:
    """An object whose keys are strings (``env``, ``assume``)."""
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise ValueError(f"{value!r} is not an object of NAME: VALUE")
    return value


def case_capability(value: object) -> str:
    """A case's capability: ``"9.0"`` (or the number 9.0, as JSON may hold it)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f'{value!r} is not a compute capability; give e.g. "9.0"')
    return capability(f"{value:.1f}" if isinstance(value, float) else value)


#: The inputs of a case (``vllm/select/*.json``) and the check of each value.
CASE_KEYS: dict[str, Callable[[Any], Any]] = {
    "config": mapping,
    "capability": case_capability,
    "num_heads": optional(positive_int),
    "platform": platform,
    "arch": optional(arch),
    "env": mapping,
    "assume": mapping,
    "aiter_installed": optional(boolean),
    "model_attn_type": optional(string),
    "selected_backend": optional(backend),
    "model_config": string,
}
#: A recorded answer in a case file: read past, never an input.
RECORDED_KEYS = (
    "selected",
    "priorities",
    "rejected",
    "aiter",
    "error",
    "selected_backend_ignored",
    "log",
)
#: The keys of a case's ``config`` (vLLM's ``AttentionSelectorConfig`` fields).
CONFIG_KEYS: dict[str, Callable[[Any], Any]] = {
    "head_size": positive_int,
    "dtype": dtype,
    "kv_cache_dtype": optional(kv_cache_dtype),
    "block_size": optional(positive_int),
    "attn_type": attn_type,
    "use_mla": boolean,
    "has_sink": boolean,
    "use_sparse": boolean,
    "use_mm_prefix": boolean,
    "use_non_causal": boolean,
    "use_kv_connector": boolean,
}


def check_case(index: int, case: object) -> None:
    """A case must be an object of :data:`CASE_KEYS` (and :data:`RECORDED_KEYS`)
    whose ``config`` holds :data:`CONFIG_KEYS`; ValueError names the case and key."""
    where = f"case {index}"
    if not isinstance(case, dict):
        raise ValueError(f'{where}: {case!r} is not an object (a case is {{"config": ...}})')
    _check_keys(where, case, CASE_KEYS, RECORDED_KEYS)
    config = case.get("config", {})
    if "capability" in config:
        raise ValueError(
            f"{where}: config key 'capability' unknown: the capability is a key of the "
            "case, beside 'config'"
        )
    _check_keys(f"{where}: config", config, CONFIG_KEYS, ())


def _check_keys(
    where: str,
    data: Mapping[str, Any],
    checks: Mapping[str, Callable[[Any], Any]],
    ignored: tuple[str, ...],
) -> None:
    for key, value in data.items():
        check = checks.get(key)
        if check is None:
            if key in ignored:
                continue
            raise ValueError(
                f"{where}: unknown key {key!r}; the keys are {', '.join(checks)}"
                + (f" ({', '.join(ignored)}: a recorded answer, ignored)" if ignored else "")
            )
        try:
            check(value)
        except ValueError as exc:
            raise ValueError(f"{where}: {key}: {exc}") from None


def check_cases(cases: object) -> list[dict[str, Any]]:
    """A ``--cases`` file's content: a list of valid cases."""
    if not isinstance(cases, list):
        raise ValueError(f"it holds {type(cases).__name__}, not a JSON list of cases")
    for index, case in enumerate(cases):
        check_case(index, case)
    return cases


__all__ = [
    "CASE_KEYS",
    "CONFIG_KEYS",
    "check_cases",
    "check_kv_cache_dtype",
]
