"""``as_json``: JSON data checked where it is built, written as ``json.dumps`` writes
the value it came from."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

import pytest

from sphinxext_attn.model.json_value import as_json


@dataclass
class _Row:
    name: str
    sizes: tuple[int, ...]
    flags: dict[str, bool | None]


def test_a_dataclass_is_written_as_asdict_writes_it() -> None:
    row = _Row("FLASH_ATTN", (16, 32), {"sink": None, "dcp": True})
    assert as_json(row) == {"name": "FLASH_ATTN", "sizes": [16, 32], "flags": row.flags}
    assert json.dumps(as_json(row)) == json.dumps(asdict(row))
    assert json.dumps(as_json([row, (1.5, "x")])) == json.dumps([asdict(row), (1.5, "x")])


@pytest.mark.parametrize("value", [{1: "a"}, {None: 1}, {"k": {2, 3}}, object()])
def test_what_json_would_write_otherwise_is_refused(value: object) -> None:
    with pytest.raises(TypeError):
        as_json(value)
