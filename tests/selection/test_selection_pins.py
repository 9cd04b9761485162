"""Edges of the selection a sampled mutation run (seed 59) found unpinned, each
test failing with the mutant it was written for: a fact both values of which pick
the same class, a GPU argument read from then on, each machine setting explored
once, KV dtypes compared in a chain, and a settled part of a rule's condition.

Mutants argued equivalent (no input tells them from the product):
- platform_lists.platform_priorities ``dict(r.layer)["use_mla"] == (category ==
  "mla")`` -> ``is``: ``use_mla`` is one of the bools ``layers`` writes, and bools
  are singletons.
- platform_lists._titled ``len(points) == 1`` -> ``<= 1``: it runs inside the loop
  over ``points.items()``, so ``points`` is never empty there.
- rule_requests ``if TYPE_CHECKING:`` -> ``if not TYPE_CHECKING:``: the block only
  imports ``Decision`` from ``model.selection``, which imports nothing of the
  selection, so importing it at run time changes nothing but the time.
- option_fields._check_one ``found is True`` -> ``found == True`` (sample 60):
  ``field_annotation`` returns True, False, None or a (path, annotation) tuple, and
  no tuple equals True.
- platform_lists ``MAX_RUNS`` 64 -> 65: a capacity (runs of one machine's
  exploration before it gives up), a choice rather than a behaviour; the rule it
  feeds is pinned in test_platforms.py.
"""

from __future__ import annotations

from pathlib import Path

from treebuilder import DEMO_TREE, edited_demo

from sphinxext_attn.knowledge.devices import platform_class
from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.environment import environment_from
from sphinxext_attn.model.selection import Config
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.pyeval.values import GpuInstance
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.selection.platform_lists import explore_machine, layers
from sphinxext_attn.selection.platforms import evaluate_selection
from sphinxext_attn.source.tree import SourceTree

XPU = "vllm/platforms/xpu.py"
MLA_RULE = """        if attn_selector_config.use_mla:
            return AttentionBackendEnum.TRITON_MLA.get_path()"""


def _edited(tmp_path: Path, rel: str, edits: dict[str, str]) -> SourceTree:
    """The demo tree with each text of ``rel`` (found once) replaced."""
    return SourceTree(edited_demo(tmp_path, rel, edits))


def test_a_fact_both_values_of_which_pick_the_same_class_is_still_a_pick(tmp_path):
    """XPU's rules ask a function whose answer the tree cannot give, and pick
    FLASH_ATTN either way: the pick stands, with one candidate per value (``> 1``
    -> ``>= 1`` classes dropped it)."""
    fact = "\n\ndef new_soc():\n    return torch.xpu.get_device_name() == 'x'\n"
    last = "        return AttentionBackendEnum.FLASH_ATTN.get_path()"
    either = f"        if new_soc():\n    {last}\n{last}"
    tree = _edited(
        tmp_path, XPU, {"\n\nclass XPUPlatform": fact + "\n\nclass XPUPlatform", last: either}
    )
    env = environment_from(platform="xpu", arch="")
    decision = Selector(Interpreter(tree, Machine(env))).decide(Config())
    assert decision.selected == "FLASH_ATTN"
    assert [(c["backend"], c["if"]) for c in decision.candidates] == [
        ("FLASH_ATTN", "new_soc() is true (--assume new_soc=true)"),
        ("FLASH_ATTN", "new_soc() is false (--assume new_soc=false)"),
    ]
    assert decision.assumptions == ["new_soc=true|false"]


def test_the_gpu_argument_is_read_from_then_on():
    """After ``read_gpu_argument`` the capability handed to the platform is a
    :class:`GpuInstance`, made once: the capabilities made before are dropped the
    first time only (``not`` dropped never switched it on)."""
    selector = Selector(Interpreter(SourceTree(DEMO_TREE), Machine()))
    config = Config(capability="9.0")
    before = selector.device_capability(config)
    assert not isinstance(before, GpuInstance)
    assert selector.device_capability(config) is before
    selector.read_gpu_argument()
    after = selector.device_capability(config)
    assert isinstance(after, GpuInstance)
    selector.read_gpu_argument()
    assert selector.device_capability(config) is after


def test_each_machine_setting_is_explored_once():
    """On gfx942 the demo's ROCm code reads aiter being installed, then
    VLLM_ROCM_USE_AITER: four settings, each run once per layer shape (``value !=
    current`` -> ``is not`` ran the setting read, ``unset``, a second time)."""
    tree = SourceTree(DEMO_TREE)
    base = environment_from(platform="rocm", arch="")
    cls = platform_class(Interpreter(tree, Machine(base)), "rocm")
    shapes = layers(tree, cls.path)[:2]
    runs = explore_machine(tree, base, "gfx942", shapes)
    settings = list(dict.fromkeys(r.facts for r in runs))
    assert settings == [
        (("installed.aiter", "false"),),
        (("VLLM_ROCM_USE_AITER", "unset"), ("installed.aiter", "true")),
        (("VLLM_ROCM_USE_AITER", "1"), ("installed.aiter", "true")),
        (("VLLM_ROCM_USE_AITER", "0"), ("installed.aiter", "true")),
    ]
    assert len(runs) == len(settings) * len(shapes)


def test_kv_dtypes_compared_in_a_chain_are_tried(tmp_path):
    """``"fp8_a" <= kv_cache_dtype < "fp8_z"`` compares the dtype with both strings:
    each is a layer shape tried (only one-comparison tests were read)."""
    platform = "vllm/platforms/rocm.py"
    text = (DEMO_TREE / platform).read_text(encoding="utf-8")
    chained = '\n\ndef _chained(kv_cache_dtype):\n    return "fp8_a" <= kv_cache_dtype < "fp8_z"\n'
    tree = _edited(tmp_path, platform, {text: text + chained})
    tried = {shape["kv_cache_dtype"] for shape in layers(tree, platform)}
    assert {"fp8_a", "fp8_z"} <= tried
    assert {shape["kv_cache_dtype"] for shape in layers(SourceTree(DEMO_TREE), platform)} == (
        tried - {"fp8_a", "fp8_z"}
    )


def test_a_settled_part_of_a_nested_condition_leaves_no_brackets(tmp_path):
    """``use_mla and (use_sparse or selected_backend is not None)``, no backend
    asked: the settled part drops out and ``use_sparse`` stands alone in the rule,
    not ``use_mla and (use_sparse)``."""
    rule = (
        "        if attn_selector_config.use_mla and (\n"
        "            attn_selector_config.use_sparse or selected_backend is not None\n"
        "        ):\n"
        "            return AttentionBackendEnum.FLASH_ATTN.get_path()\n"
    )
    tree = _edited(tmp_path, XPU, {MLA_RULE: rule + MLA_RULE})
    out = evaluate_selection(tree, environment_from(platform="xpu", arch=""))
    assert [(r.conditions, r.outcome) for r in out.rules][1:3] == [
        (("use_mla and use_sparse",), "FLASH_ATTN"),
        (("use_mla",), "TRITON_MLA"),
    ]


def test_a_fact_assumed_true_is_tried_false():
    """An assumption read as ``true`` has ``false`` for its alternative (``== "true"``
    -> ``> "true"`` tried ``true`` again, and found no change)."""
    from sphinxext_attn.model.environment import Environment
    from sphinxext_attn.selection.alternatives import alternatives

    def decide(environment: Environment) -> dict:
        chosen = "B" if environment.assume.get("installed.pkg") == "false" else "A"
        return {"selected": chosen, "priorities": [], "rejected": {}}

    decision = {"selected": "A", "assumptions": ["installed.pkg=true"]}
    found = alternatives(decision, Environment(), decide)
    assert found == [
        {"env": {}, "assume": {"installed.pkg": "false"}, "option": {}, "selected": "B"}
    ]


def test_a_bare_name_other_than_the_request_stays_a_condition(tmp_path):
    """``if mla:`` (a name bound from the config, sorting before ``selected_backend``)
    is a condition of the rule; only ``if selected_backend:`` is settled, false, with
    no backend asked (``==`` -> ``<=`` settled every such name)."""
    rule = (
        "        mla = attn_selector_config.use_mla\n"
        "        if mla:\n"
        "            return AttentionBackendEnum.TRITON_MLA.get_path()\n"
        "        if selected_backend:\n"
        "            return AttentionBackendEnum.FLASH_ATTN.get_path()\n"
    )
    tree = _edited(tmp_path, XPU, {MLA_RULE: rule})
    out = evaluate_selection(tree, environment_from(platform="xpu", arch=""))
    assert [(r.conditions, r.outcome) for r in out.rules][1:3] == [
        (("(use_mla)",), "TRITON_MLA"),
        (("dtype == torch.float32",), "TRITON_ATTN"),
    ]
