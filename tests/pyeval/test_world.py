"""The evaluator's world: without one, an interpreter knows plain Python only; a
library's knowledge is a :class:`World` plugged in from outside (vLLM's is
``knowledge.machine.Machine``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from evaluator import call_in, tiny_package

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter, Unknown, World
from sphinxext_attn.pyeval.values import External

CODE = """\
import math
import os
import re

from vllm.platforms import current_platform


def pi():
    return math.pi


def home():
    return os.getenv("HOME_SET", "unset")


def arch():
    return re.match(r"gfx(\\d+)", "gfx942").group(1)


def platform():
    return current_platform


def answered():
    return helper_of_the_library(2)
"""


def _interp(tmp_path: Path, world: World | None = None) -> Interpreter:
    files = {
        "vllm/platforms/__init__.py": "current_platform = None\n",
        "vllm/code.py": CODE + "\nfrom somelib import helper as helper_of_the_library\n",
    }
    return tiny_package(tmp_path, files, world)


def _call(interp: Interpreter, name: str) -> object:
    return call_in(interp, "vllm.code", name)


def test_without_a_world_the_interpreter_knows_plain_python(tmp_path: Path) -> None:
    interp = _interp(tmp_path)
    assert type(interp.world) is World
    assert _call(interp, "pi") == pytest.approx(3.141592653589793)
    assert _call(interp, "arch") == "942"
    assert _call(interp, "platform") is None  # the module's own binding: no platform is made
    with pytest.raises(Unknown, match="os.getenv"):
        _call(interp, "home")  # the environment is a machine's fact, not Python's


def test_vllms_world_answers_what_it_knows(tmp_path: Path) -> None:
    interp = _interp(tmp_path, Machine())
    assert _call(interp, "home") == "unset"  # no variable is set on the reference machine
    assert ("HOME_SET", "unset") in interp.facts


class _Library(World):
    """A library's knowledge: its helper doubles its argument."""

    def call_external(
        self, interp: Interpreter, func: External, args: list[object], kwargs: dict[str, object]
    ) -> object:
        if func.qualname == "somelib.helper":
            return 2 * args[0]  # type: ignore[operator]
        return super().call_external(interp, func, args, kwargs)


def test_a_library_plugs_its_knowledge_in_as_a_world(tmp_path: Path) -> None:
    with pytest.raises(Unknown, match="somelib.helper"):
        _call(_interp(tmp_path / "plain"), "answered")
    assert _call(_interp(tmp_path / "lib", _Library()), "answered") == 4
