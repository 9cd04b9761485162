"""A backend's reasons from its own check where ``get_valid_backends`` only passes
the configuration on (``select/selector_passthrough.py``): which loops qualify,
and that every answer of the selector's questions is the one the loop gives."""

from __future__ import annotations

import ast
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
import vllm_trees
from treebuilder import DEMO_TREE

from sphinxext_attn.knowledge.machine import machine_of
from sphinxext_attn.selector import passthrough as selector_passthrough
from sphinxext_attn.selector import probe as selector_probe
from sphinxext_attn.selector.passthrough_loop import passed_through
from sphinxext_attn.selector.table import build_selector_table

LOOP = """
def get_valid_backends(cls, device_capability, attn_selector_config, num_heads=None):
    valid = []
    invalid = {}
    backends = _get_backend_priorities(
        use_mla=attn_selector_config.use_mla, device_capability=device_capability,
        num_heads=num_heads,
    )
    for priority, backend in enumerate(backends):
        try:
            backend_class = backend.get_class()
            reasons = backend_class.validate_configuration(
                device_capability=device_capability, **attn_selector_config._asdict()
            )
        except ImportError as exc:
            reasons = [str(exc)]
        if reasons:
            invalid[backend] = (priority, reasons)
        else:
            valid.append((backend, priority))
    return valid, invalid
"""


def _loop(source: str = LOOP, old: str = "", new: str = "") -> Any:
    changed = source.replace(old, new)
    assert changed != source or not old
    return passed_through(ast.parse(textwrap.dedent(changed)).body[0])


def test_vllms_loop_passes_the_configuration_on_and_keeps_the_list_whole() -> None:
    loop = _loop()
    assert loop is not None and loop.whole
    assert isinstance(loop.call.func, ast.Attribute)
    assert loop.call.func.attr == "validate_configuration"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # the configuration read by the loop itself
        (
            "    for priority",
            "    if attn_selector_config.use_mla:\n        pass\n    for priority",
        ),
        # a parameter handed to something other than the check or the priorities
        ("backend.get_class()", "backend.get_class(num_heads)"),
        # a parameter rebound
        ("    valid = []", "    valid = []\n    device_capability = None"),
        # the priority function rebound: the stand-in would not answer
        ("    valid = []", "    valid = []\n    _get_backend_priorities = list"),
        # a nested scope that could keep a parameter
        ("    valid = []", "    valid = []\n    keep = lambda: num_heads"),
    ],
)
def test_a_loop_that_does_more_than_pass_the_configuration_on_is_asked_in_full(
    old: str, new: str
) -> None:
    assert _loop(LOOP, old, new) is None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("if reasons:", 'if "sinks" in reasons:'),  # the list read, not just tested
        ("(priority, reasons)", "(priority, reasons[:1])"),
        ("    return valid, invalid", "    print(invalid)\n    return valid, invalid"),
    ],
)
def test_a_loop_that_reads_the_list_is_answered_per_list(old: str, new: str) -> None:
    loop = _loop(LOOP, old, new)
    assert loop is not None and not loop.whole


def _answers(root: str, through: bool, platforms: tuple[str, ...]) -> tuple[list[Any], int]:
    """Every question the table's probers answered (reasons, facts read, whether
    portable), by machine, and how many the pass-through answered."""
    probers: list[selector_probe.Prober] = []
    answered = [0]
    start = selector_probe.Prober.__init__
    answer = selector_passthrough.PassThrough.answer

    def made(self: selector_probe.Prober, *args: Any, **kwargs: Any) -> None:
        start(self, *args, **kwargs)
        if not through:
            self._through = None
        probers.append(self)

    def counted(self: Any, *args: Any) -> Any:
        found = answer(self, *args)
        answered[0] += found is not None
        return found

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(selector_probe.Prober, "__init__", made)
        patch.setattr(selector_passthrough.PassThrough, "answer", counted)
        patch.setattr("sphinxext_attn.parallel.forked.spare_core", lambda: False)
        build_selector_table(root, sample=0, platforms=platforms)
    out = [
        (
            machine_of(p.interp).environment.key(),
            {k: (a.reasons, a.facts, a.read, a.portable) for k, a in p._answers.items()},
        )
        for p in probers
    ]
    return out, answered[0]


def test_every_answer_on_the_demo_tree_is_the_loops() -> None:
    platforms = ("cuda", "rocm", "cpu")
    full, none = _answers(str(DEMO_TREE), False, platforms)
    through, answered = _answers(str(DEMO_TREE), True, platforms)
    assert none == 0 and answered > 0
    assert through == full


def test_the_facts_the_loop_reads_come_with_its_answers(tmp_path: Path) -> None:
    """A loop that reads the machine (an environment variable) around the check: the
    answers given without running it carry that read, as the loop's own do."""
    root = tmp_path / "tree"
    shutil.copytree(DEMO_TREE, root)
    cuda = root / "vllm" / "platforms" / "cuda.py"
    text = cuda.read_text(encoding="utf-8")
    loop = "        for priority, backend in enumerate(backends):\n"
    assert text.count(loop) == 1
    text = text.replace("\nimport torch\n", "\nimport os\nimport torch\n", 1).replace(
        loop,
        loop + '            if os.environ.get("VLLM_DEMO_LOOP_FLAG"):\n                pass\n',
    )
    cuda.write_text(text, encoding="utf-8")
    full, _ = _answers(str(root), False, ("cuda",))
    through, answered = _answers(str(root), True, ("cuda",))
    assert answered > 0
    assert through == full
    reads = [a[2] for _, answers in through for a in answers.values()]
    assert reads and all(any("VLLM_DEMO_LOOP_FLAG" in r for r in read) for read in reads)


@pytest.mark.realtree
@pytest.mark.slow
def test_every_answer_on_vllm_033_is_the_loops() -> None:
    root = str(vllm_trees.tree("0.33.0"))
    full, _ = _answers(root, False, ("cuda",))
    through, answered = _answers(root, True, ("cuda",))
    assert answered > len(full[0][1]) // 2  # most questions never run the loop
    assert through == full


def test_a_check_kept_under_one_set_of_engine_options_is_not_reused_for_another() -> None:
    """The selector asks the same prober under other engine options (a model's attention
    type, :meth:`Selector.model`): a check kept under one set must not answer for the
    other, so the options are part of where it was kept (a key without them reuses
    answers computed under ``--option`` values for others)."""
    from dataclasses import replace

    from sphinxext_attn.knowledge.machine import Machine
    from sphinxext_attn.model.environment import REFERENCE
    from sphinxext_attn.model.selection import Config
    from sphinxext_attn.pyeval import Interpreter
    from sphinxext_attn.selection.decision import Selector
    from sphinxext_attn.source.tree import SourceTree

    selector = Selector(Interpreter(SourceTree(DEMO_TREE), Machine(REFERENCE)))
    through = selector_passthrough.PassThrough(selector, None)
    config = Config()
    plain = through._where("FLASH_ATTN", config)
    with selector.model(replace(config, model_attn_type="encoder_decoder")):
        other = through._where("FLASH_ATTN", config)
    assert plain != other
    assert through._where("FLASH_ATTN", config) == plain  # the options are restored
