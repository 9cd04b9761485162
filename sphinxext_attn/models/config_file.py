"""A Hugging Face ``config.json`` (or the folder holding one), checked once.

Its values are data, never code: they are read as JSON and nothing else.
"""

from __future__ import annotations

import json
from pathlib import Path

from sphinxext_attn.model.json_value import JsonObject

CONFIG_NAME = "config.json"


def load_model_config(path: str | Path) -> tuple[Path, JsonObject]:
    """The file and its object; ValueError (one line) for anything else."""
    where = Path(path)
    if where.is_dir():
        where = where / CONFIG_NAME
    if not where.is_file():
        raise ValueError(f"{str(path)!r} is neither a config.json nor a folder holding one")
    try:
        data = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{str(where)!r} is not readable JSON ({first})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{str(where)!r} holds {type(data).__name__}, not a JSON object")
    architectures = data.get("architectures")
    if not (
        isinstance(architectures, list)
        and architectures
        and all(isinstance(a, str) for a in architectures)
    ):
        raise ValueError(
            f"{str(where)!r} has no 'architectures' list of names (e.g. [\"LlamaForCausalLM\"])"
        )
    return where, data
