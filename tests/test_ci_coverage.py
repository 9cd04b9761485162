"""What CI runs where: every test on the lowest and the newest Python and on the
lowest and the newest dependencies, the analysis core on every Python between, and
each heavy test once. `.ci/run` narrows tox's runs with marker expressions
(``ATTN_MARKERS``, ``ATTN_HEAVY``); this reads them, with tox.ini's defaults, and
asks pytest's own marker matching which runs take a test of each kind."""

from __future__ import annotations

import configparser
import itertools
import re
from pathlib import Path

from _pytest.mark.expression import Expression

REPO = Path(__file__).resolve().parent.parent
MARKERS = ("deps", "realtree", "browser", "slow", "pdf", "tools")
#: the Python of each tox environment CI runs tests in
PYTHONS = {"py311": "3.11", "py312": "3.12", "newest": "3.13", "oldest": "3.11"}


def _ci_runs() -> list[tuple[str, str]]:
    """``(environment, marker expression)`` of each tox run of tests in .ci/run."""
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(REPO / "tox.ini", encoding="utf-8")
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    runs = []
    pattern = r'(?:ATTN_(MARKERS|HEAVY)="([^"]*)"\s*(?:\\\n)?\s*)?tox_in [ab] -e (\w+)'
    for variable, value, env in re.findall(pattern, script):
        section = f"testenv:{env}" if f"testenv:{env}" in cfg else "testenv"
        found = re.search(r'pytest -rs -m (?:"([^"]*)"|(\w+))', cfg[section].get("commands", ""))
        if found is None:
            continue  # docs, lint, type: no pytest run
        expression = found[1] or found[2]
        default = re.search(r"\{env:ATTN_(\w+):([^}]*)\}", expression)
        if default is not None:
            assert variable in ("", default[1]), (env, variable)
            expression = expression.replace(default[0], value if variable else default[2])
        runs.append((env, expression))
    return runs


def _taken_by(markers: set[str]) -> list[str]:
    return [
        env
        for env, expression in _ci_runs()
        if Expression.compile(expression).evaluate(lambda name, **_: name in markers)
    ]


def test_every_kind_of_test_runs_where_it_should():
    for flags in itertools.product((False, True), repeat=len(MARKERS)):
        markers = {m for m, on in zip(MARKERS, flags, strict=True) if on}
        envs = _taken_by(markers)
        if "tools" in markers:
            assert envs == ["tools"], markers
        elif markers & {"browser", "slow", "pdf"}:
            assert envs == ["heavy"], markers  # once, in one lane
        else:
            pythons = {PYTHONS[e] for e in envs}
            assert {"3.11", "3.13"} <= pythons, markers
            assert ("3.12" in pythons) == (not markers & {"deps", "realtree"}), markers
            if "deps" in markers:  # the floors and the newest of the three
                assert {"oldest", "newest"} <= set(envs), markers


def test_the_heavy_tests_are_split_over_both_lanes():
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert len(re.findall(r'ATTN_HEAVY="[^"]*" tox_in a -e heavy', script)) == 1
    assert len(re.findall(r'ATTN_HEAVY="[^"]*" tox_in b -e heavy', script)) == 1
