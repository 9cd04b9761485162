"""Shared pytest setup: Sphinx test roots live in tests/roots/test-*/."""

from __future__ import annotations

from pathlib import Path

import pytest

collect_ignore = ["roots", "trees"]


@pytest.fixture(scope="session")
def rootdir() -> Path:
    return Path(__file__).parent / "roots"
