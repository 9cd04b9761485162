"""Answers of the selector's table taken from another GPU (``selector/gpu_reads.py``):
where a question looked at the GPU only through calls that answer alike on this
one, its answer is this GPU's too; every answer is the one asking gives."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import vllm_trees
from treebuilder import DEMO_TREE

from sphinxext_attn.knowledge.machine import Machine, machine_of
from sphinxext_attn.model.environment import REFERENCE
from sphinxext_attn.model.selection import Config
from sphinxext_attn.pyeval import Interpreter, stmtmemo
from sphinxext_attn.pyeval.stmtmemo import key_part
from sphinxext_attn.pyeval.values import CAPABILITY, GpuInstance
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.selector import gpu_reads
from sphinxext_attn.selector import probe as selector_probe
from sphinxext_attn.selector.table import build_selector_table
from sphinxext_attn.source.tree import SourceTree


def _answers(root: str, share: bool, platforms: tuple[str, ...] = ("cuda",)) -> tuple[Any, int]:
    """Every prober's answers of a whole build, and how many came from another GPU
    (``share``: False asks every question in full)."""
    probers: list[selector_probe.Prober] = []
    start = selector_probe.Prober.__init__

    def made(self: selector_probe.Prober, *args: Any, **kwargs: Any) -> None:
        start(self, *args, **kwargs)
        probers.append(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(selector_probe.Prober, "__init__", made)
        if not share:
            patch.setattr(selector_probe.Prober, "_on_other_gpu", lambda *_: None)
        patch.setattr("sphinxext_attn.parallel.forked.spare_core", lambda: False)
        build_selector_table(root, sample=0, platforms=platforms)
    out = [
        (
            machine_of(p.interp).environment.key(),
            {k: (a.reasons, a.facts, a.read, a.portable) for k, a in p._answers.items()},
        )
        for p in probers
    ]
    return out, sum(p.from_other_gpus for p in probers)


def test_every_answer_taken_from_another_gpu_on_the_demo_tree_is_asking_its() -> None:
    platforms = ("cuda", "rocm", "cpu")
    full, none = _answers(str(DEMO_TREE), False, platforms)
    shared, taken = _answers(str(DEMO_TREE), True, platforms)
    assert none == 0 and taken > 0
    assert shared == full


def test_a_loop_that_looks_at_the_gpu_itself_keeps_every_answer_to_its_gpu(
    tmp_path: Path,
) -> None:
    """The platform's loop reads the capability outside any call: no answer of it
    can be taken from another GPU."""
    root = tmp_path / "tree"
    shutil.copytree(DEMO_TREE, root)
    cuda = root / "vllm" / "platforms" / "cuda.py"
    text = cuda.read_text(encoding="utf-8")
    loop = "        for priority, backend in enumerate(backends):\n"
    assert text.count(loop) == 1
    text = text.replace(
        loop, loop + "            if device_capability.minor == 7:\n                pass\n"
    )
    cuda.write_text(text, encoding="utf-8")
    full, _ = _answers(str(root), False)
    shared, taken = _answers(str(root), True)
    assert taken == 0
    assert shared == full


def test_a_check_that_differs_by_gpu_is_asked_where_it_differs(tmp_path: Path) -> None:
    """A backend whose supported capabilities split the grid's GPUs: its answers are
    taken only where its capability check answers as on the GPU first asked."""
    root = tmp_path / "tree"
    shutil.copytree(DEMO_TREE, root)
    flash = root / "vllm" / "v1" / "attention" / "backends" / "flash_attn.py"
    text = flash.read_text(encoding="utf-8")
    head = "    def supports_compute_capability(cls, capability: DeviceCapability) -> bool:\n"
    assert text.count(head) == 1
    text = text.replace(
        head, head + "        if capability.minor == 6:\n            return False\n"
    )
    flash.write_text(text, encoding="utf-8")
    full, _ = _answers(str(root), False)
    shared, taken = _answers(str(root), True)
    assert taken > 0
    assert shared == full
    refused = [
        key
        for _, answers in full
        for key, (reasons, *_) in answers.items()
        if key[0] == "FLASH_ATTN" and "compute capability not supported" in reasons
    ]
    assert refused and all(key[1][0] == "8.6" for key in refused)


def test_looking_at_the_gpu_argument_reads_the_gpu_and_keying_it_does_not() -> None:
    selector = Selector(Interpreter(SourceTree(DEMO_TREE), Machine(REFERENCE)))
    selector.read_gpu_argument()
    interp = selector.interp
    with interp.question(capability=(9, 0), steps=None) as asked:
        gpu = selector.device_capability(Config(capability="9.0"))
    assert isinstance(gpu, GpuInstance) and not asked.read & CAPABILITY
    with interp.question(capability=(9, 0), steps=None) as keyed:
        part = key_part(gpu)
    assert not keyed.read & CAPABILITY
    with interp.question(capability=(9, 0), steps=None) as looked:
        items = gpu.items
    assert looked.read & CAPABILITY
    assert part == key_part(gpu) and items == (9, 0)


@pytest.mark.realtree
@pytest.mark.slow
def test_every_answer_taken_from_another_gpu_on_vllm_033_is_asking_its() -> None:
    root = str(vllm_trees.tree("0.33.0"))
    full, _ = _answers(root, False)
    shared, taken = _answers(root, True)
    assert taken > len(full[0][1]) // 3  # about 45% of 19,117 questions
    assert shared == full


def _observed(root: str, replay: bool) -> tuple[list[tuple[object, ...]], int]:
    """Per question asked in full, the calls its answer looked at the GPU through
    (None: kept to its GPU), and how many statement effects were replayed to the
    observer; ``replay`` False runs every statement that read the GPU again under
    the observer, as the statement memo once did."""
    seen: list[tuple[object, ...]] = []
    heard_again = 0
    ask = selector_probe.Prober._asked
    hear = gpu_reads.GpuReads.hear_again
    record = stmtmemo.StatementMemo._record

    def unheard(self: stmtmemo.StatementMemo, *args: Any, listen: bool = False) -> None:
        record(self, *args)

    def asked(self: selector_probe.Prober, backend: str, config: Config) -> Any:
        found = ask(self, backend, config)
        observed = self.interp.gpu_observer.observed()  # type: ignore[union-attr]
        calls = (
            None
            if observed is None
            else [
                (o.func.name, o.func.node.lineno, o.kwargs, repr(o.answer), o.facts)
                for o in observed
            ]
        )
        seen.append((backend, config.key(), calls))
        return found

    def hear_again(self: gpu_reads.GpuReads, heard: object) -> None:
        nonlocal heard_again
        heard_again += 1
        hear(self, heard)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(selector_probe.Prober, "_asked", asked)
        patch.setattr(gpu_reads.GpuReads, "hear_again", hear_again)
        if not replay:  # nothing is ever kept of what the observer heard
            patch.setattr(stmtmemo.StatementMemo, "_record", unheard)
        patch.setattr("sphinxext_attn.parallel.forked.spare_core", lambda: False)
        build_selector_table(root, sample=0)
    return seen, heard_again


def test_a_remembered_statement_that_read_the_gpu_is_heard_as_running_it_would_be() -> None:
    """The statement memo replays a check that read the GPU to the observer (what
    it heard when run again): every question asked in full looks at the GPU
    through the same calls as when each such check runs again."""
    ran, none = _observed(str(DEMO_TREE), False)
    replayed, heard = _observed(str(DEMO_TREE), True)
    assert none == 0 and heard > 0
    assert any(calls for *_, calls in ran)
    assert replayed == ran
