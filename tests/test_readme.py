"""The README a newcomer follows verbatim (issue 35): it names no file outside the
repository, shows the test extra where pytest is run, and the pre-commit snippet
pins by commit (tests/cli/test_tools.py runs it)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_no_file_outside_the_repository():
    assert "shared/" not in README
    outside = re.findall(r"(?<![\w.])\.\./[\w./-]+", README)
    # the one parent path is a user's own conf.py example, not a file of ours
    assert outside == ["../third_party/vllm"], outside


def test_commands_use_only_what_the_repository_has():
    assert "python -m sphinxext_attn fetch 0.33.0" in README
    for path in re.findall(r"`((?:docs|tests|scripts|\.ci|sphinxext_attn)/[\w./-]+)`", README):
        assert (REPO / path.rstrip("/")).exists(), path


def test_pytest_is_shown_with_its_extra():
    lines = README.splitlines()
    pytest_at = next(i for i, line in enumerate(lines) if "pytest -m" in line)
    assert any('".[test' in line for line in lines[max(0, pytest_at - 3) : pytest_at]), lines[
        pytest_at
    ]


def test_precommit_snippet_pins_a_commit_not_a_missing_tag():
    assert "rev: v0.1.0" not in README and "<owner>" not in README
    assert re.search(r"rev: [0-9a-f]{40}", README)


def test_tox_skips_missing_interpreters_locally_and_ci_insists():
    tox = (REPO / "tox.ini").read_text(encoding="utf-8")
    assert "skip_missing_interpreters = true" in tox
    assert "--skip-missing-interpreters false" in (REPO / ".ci" / "run").read_text()
