"""The abstract KV cache dtype (pyeval/abstract_str): ``supports_kv_cache_dtype``
of small invented trees asked with one abstract string answers as asking each
dtype alone does, and as CPython running the method does, with fewer runs
where the method only tests the string."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from runtime_trees import runtime_backend

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter, Raised, Unknown
from sphinxext_attn.pyeval.abstract_str import AbstractStr, StrExplorer, explore_strings
from sphinxext_attn.pyeval.values import NODE
from sphinxext_attn.runtime.questions import Asker
from sphinxext_attn.source.tree import SourceTree

MODULE = "vllm.v1.attention.backends.my_attn"
DTYPES = ["auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "nvfp4", ""]
METHOD = "supports_kv_cache_dtype"

#: method bodies (over ``kv_cache_dtype``), and whether one run may answer for
#: several dtypes (False: each dtype is asked alone, the run giving up)
BODIES = {
    "if kv_cache_dtype is None:\n    return True\nreturn kv_cache_dtype in ['auto', 'fp8']": True,
    "return kv_cache_dtype.startswith('fp8') or kv_cache_dtype == 'auto'": True,
    "return kv_cache_dtype.endswith(('_e4m3', '_e5m2')) and kv_cache_dtype != 'x'": True,
    "return {'fp8': True, 'auto': False}.get(kv_cache_dtype, True)": True,
    "return {}.get(kv_cache_dtype) is None": True,
    "return kv_cache_dtype is not None and kv_cache_dtype": True,
    "return kv_cache_dtype in 'auto fp8'": True,
    "return kv_cache_dtype != 'auto' and kv_cache_dtype not in ('fp8_e5m2',)": True,
    "return isinstance(kv_cache_dtype, str) and kv_cache_dtype in {'nvfp4': 1}": True,
    "return kv_cache_dtype in ('fp8', 1)": False,
    "if kv_cache_dtype.startswith('fp8'):\n    raise ValueError(f'no {kv_cache_dtype}')\n"
    "return True": False,
    "return len(kv_cache_dtype) > 4": False,
    "return kv_cache_dtype.upper() == 'AUTO'": False,
    "seen = []\nseen.append(kv_cache_dtype)\nreturn seen[0] == 'fp8'": False,
    "return (kv_cache_dtype + '_x').startswith('fp8')": False,
    "return kv_cache_dtype < 'c'": False,
    # edges (issue 39): the string compared with itself, with other types, in a list
    "return kv_cache_dtype == kv_cache_dtype and kv_cache_dtype is kv_cache_dtype": True,
    "return kv_cache_dtype != None and kv_cache_dtype != 3 and kv_cache_dtype != 1.5": True,
    "return [kv_cache_dtype] == ['fp8'] or (kv_cache_dtype,) == ('auto',)": True,
    "return kv_cache_dtype == [1]": False,
    "return kv_cache_dtype is 'fp8'.upper()": False,
    "return kv_cache_dtype in range(3)": False,
    "return kv_cache_dtype.startswith('fp', 0)": False,
    "try:\n    return kv_cache_dtype.startswith(1)\nexcept TypeError:\n    return True": False,
    "return {1: True, 'fp8': True}.get(kv_cache_dtype, False)": False,
    "class A:\n    pass\nreturn not isinstance(kv_cache_dtype, A)": False,
    "return 'fp' in kv_cache_dtype": False,
}


def _asker(root: Path, body: str) -> Asker:
    inner = "".join(f"    {line}\n" for line in body.splitlines())
    runtime_backend(root, f"@classmethod\ndef {METHOD}(cls, kv_cache_dtype):\n{inner}")
    it = Interpreter(SourceTree(root), Machine())
    return Asker(it, it.module_attr(it.module(MODULE), "MyBackend", NODE))


def _one_by_one(ask: Asker) -> list[str]:
    """What asking each dtype alone accepts (``ask_each``'s loop over non-strings)."""
    out = []
    for dtype in DTYPES:
        answer = ask.ask(METHOD, dtype)
        assert answer.unknown is None
        if not answer.raised and ask.interp.truth(answer.value, NODE, ask.cls.path):
            out.append(dtype)
    return out


def _python(body: str) -> list[str]:
    namespace: dict[str, Any] = {}
    inner = "".join(f"    {line}\n" for line in body.splitlines())
    exec(f"def f(kv_cache_dtype):\n{inner}", namespace)  # noqa: S102 (the test's own text)
    out = []
    for dtype in DTYPES:
        try:
            if namespace["f"](dtype):
                out.append(dtype)
        except ValueError:
            pass
    return out


@pytest.mark.parametrize("body", BODIES)
def test_abstract_answers_as_each_dtype_alone(tmp_path: Path, body: str) -> None:
    ask = _asker(tmp_path / "a", body)
    asked: list[Any] = []
    call = ask.call

    def counted(name: str, *args: Any, **kw: Any) -> Any:
        asked.append(args[0])
        return call(name, *args, **kw)

    ask.call = counted  # type: ignore[method-assign]
    answer = ask.ask_each(METHOD, DTYPES, DTYPES)
    assert answer.unknown is None and not answer.raised
    assert answer.value == _one_by_one(_asker(tmp_path / "b", body)) == _python(body)
    runs = [a for a in asked if isinstance(a, AbstractStr)]
    alone = [a for a in asked if isinstance(a, str)]
    if BODIES[body]:
        assert not alone and 1 <= len(runs) < len(DTYPES)
    else:
        assert alone  # each dtype the run gave up on is asked on its own


def test_unknown_stops_where_asking_one_by_one_stops(tmp_path: Path) -> None:
    """The first dtype whose answer is unknown is the answer, as in the loop."""
    body = "if kv_cache_dtype == 'fp8':\n    return undefined_name\nreturn True"
    answer = _asker(tmp_path / "a", body).ask_each(METHOD, DTYPES, DTYPES)
    assert answer.unknown is not None and "undefined_name" in str(answer.unknown)


def test_runs_follow_the_first_string_left() -> None:
    """Each run takes the path of the first string not answered yet; a test splits
    the strings left, and the strings on the run's side are answered with it."""
    seen: list[list[str]] = []

    def run(value: AbstractStr) -> bool:
        explorer: StrExplorer = value.explorer
        ok = explorer.decide(lambda s: s.startswith("fp8"))
        seen.append([DTYPES[i] for i in explorer.current])
        return ok

    accepted = explore_strings(DTYPES, run, lambda i: False, lambda: False)
    assert [DTYPES[i] for i in accepted] == ["fp8", "fp8_e4m3", "fp8_e5m2"]
    assert seen == [
        ["auto", "float16", "bfloat16", "nvfp4", ""],
        ["fp8", "fp8_e4m3", "fp8_e5m2"],
    ]


def test_a_kept_abstract_string_is_unknown_after_its_run() -> None:
    kept: list[AbstractStr] = []

    def run(value: AbstractStr) -> bool:
        kept.append(value)
        return True

    explore_strings(["a", "b"], run, lambda i: False, lambda: False)
    with pytest.raises(Unknown):
        hash(kept[0])
    assert not isinstance(Unknown("x"), Raised)


def test_runs_stop_when_the_question_is_stopped() -> None:
    """Once ``stopped()`` says so, no further run is made: the strings left are not
    answered (the first run's side is all that is accepted)."""
    runs: list[int] = []

    def run(value: AbstractStr) -> bool:
        runs.append(1)
        value.explorer.decide(lambda s: s.startswith("fp8"))
        return True

    accepted = explore_strings(DTYPES, run, lambda i: False, lambda: len(runs) >= 1)
    assert [DTYPES[i] for i in accepted] == ["auto", "float16", "bfloat16", "nvfp4", ""]
    assert len(runs) == 1
