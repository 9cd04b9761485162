"""Edges of the selection a sampled mutation run (seed 61) found unpinned, each
test failing with the mutant it was written for.

Mutant argued equivalent (no input tells it from the product):
- plugin_checks ``rel.split("/", 1)[0]`` -> ``split("/", 2)[0]``: the first piece is
  the text before the first ``/`` whatever the split count (1 or more).
- platform_lists.platform_priorities ``category == "mla"`` -> ``category is "mla"``:
  ``category`` runs over the literal tuple ``("standard", "mla")`` of the same
  function, and CPython interns identifier-like string constants, so the equal
  strings are one object.
"""

from __future__ import annotations

from treebuilder import DEMO_TREE, edited_demo

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.selection import Config
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.source.tree import SourceTree

SELECTOR = "vllm/v1/attention/selector.py"
#: the demo's selector config as a dataclass whose ``__post_init__`` reads the GPU
GPU_CONFIG = {
    "from typing import NamedTuple\n": "from dataclasses import dataclass\n",
    "class AttentionSelectorConfig(NamedTuple):": ("@dataclass\nclass AttentionSelectorConfig:"),
    "    use_kv_connector: bool = False\n": (
        "    use_kv_connector: bool = False\n\n"
        "    def __post_init__(self):\n"
        "        from vllm.platforms import current_platform\n\n"
        "        self.use_dcp = current_platform.get_device_capability().major >= 10\n"
    ),
}


def test_a_selector_config_built_from_the_gpu_is_built_for_each_gpu(tmp_path):
    """A config whose making reads the GPU is made again for another GPU; one that
    reads nothing is shared (``if not question.read`` -> ``if not not ...`` shared
    the one made on 9.0 with 10.0, whose ``use_dcp`` is then wrong)."""
    selector = Selector(
        Interpreter(SourceTree(edited_demo(tmp_path, SELECTOR, GPU_CONFIG)), Machine())
    )
    made = {}
    for capability in ("9.0", "10.0"):
        config = Config(capability=capability)
        with selector.interp.question(capability=config.capability_tuple, steps=None):
            made[capability] = selector.build_config(config)
    assert made["9.0"].fields["use_dcp"] is False
    assert made["10.0"].fields["use_dcp"] is True
    plain = Selector(Interpreter(SourceTree(DEMO_TREE), Machine()))
    shared = [plain.build_config(Config(capability=c)) for c in ("9.0", "10.0")]
    assert shared[0] is shared[1]


ROCM = "vllm/platforms/rocm.py"
#: the demo's ROCm priorities, made to read the MLA layer's head size
HEAD_SIZE_RULE = {
    "def _get_backend_priorities(use_mla: bool, use_kv_connector: bool = False) -> list:\n"
    "    if use_mla:\n": (
        "def _get_backend_priorities(use_mla, use_kv_connector=False, head_size=0):\n"
        "    if use_mla and head_size != 576:\n"
        "        return [AttentionBackendEnum.TRITON_ATTN]\n"
        "    if use_mla:\n"
    ),
    "attn_selector_config.use_mla, attn_selector_config.use_kv_connector\n": (
        "attn_selector_config.use_mla,\n"
        "            attn_selector_config.use_kv_connector,\n"
        "            attn_selector_config.head_size,\n"
    ),
}


def test_the_mla_layer_shape_has_deepseeks_head_size(tmp_path):
    """The lists of a platform are asked for MLA layers with head size 576 (512 of
    latent KV and 64 of rope, as DeepSeek's layers have), so a platform that tells
    MLA head sizes apart lists what those models get (``576`` -> ``575`` listed the
    fallback)."""
    from sphinxext_attn.model.environment import environment_from
    from sphinxext_attn.selection.platform_lists import platform_priorities

    root = edited_demo(tmp_path, ROCM, HEAD_SIZE_RULE)
    base = environment_from(
        {"VLLM_ROCM_USE_AITER": "1"}, None, {"installed.aiter": "1"}, "rocm", "gfx942"
    )
    lists = [p.backends for p in platform_priorities(SourceTree(root), base)]
    assert ("TRITON_MLA",) in lists


def test_a_reason_is_found_in_the_pieces_of_a_file_not_parsed_whole(tmp_path):
    """An f-string's reason is found by parsing the top-level pieces holding the
    reason's word: no file is parsed whole that the evaluation did not (``if whole
    is None`` -> ``if not whole is None`` parsed the whole file instead)."""
    from runtime_trees import runtime_backend
    from treebuilder import dedent

    from sphinxext_attn.model.records import Location
    from sphinxext_attn.selection.reason_sources import ReasonLocator

    helpers = "vllm/v1/attention/my_helpers.py"
    source = 'def message(what):\n    return f"MyBackend needs {what} device"\n'
    padding = "".join(f"\n\ndef other{i}():\n    return {i}\n" for i in range(50))
    root = runtime_backend(tmp_path, "pass\n", extra={helpers: dedent(source) + padding})
    tree = SourceTree(root)
    tree.text(helpers)  # the evaluation read it (and parsed none of it)
    locator = ReasonLocator(Interpreter(tree, Machine()))
    found = locator.locate("MY_ATTN", "MyBackend needs a Hopper device")
    assert found == Location(helpers, 2)
    assert tree.parsed(helpers) is None


XPU = "vllm/platforms/xpu.py"
MLA_RULE = """        if attn_selector_config.use_mla:
            return AttentionBackendEnum.TRITON_MLA.get_path()"""


def test_a_rule_reads_a_name_bound_in_a_chain_or_unpacked(tmp_path):
    """``mla = wanted = attn_selector_config.use_mla`` binds both names, so a rule on
    ``wanted`` reads ``(use_mla)``, as after ``wanted = ...`` (only one-target
    assignments were read: sample 61's ``len(stmt.targets) == 1`` -> ``>= 1`` showed
    it); a name unpacked afterwards no longer holds what it held, so a rule on it
    reads the name itself."""
    from sphinxext_attn.model.environment import environment_from
    from sphinxext_attn.selection.platforms import evaluate_selection

    chained = (
        "        mla = wanted = attn_selector_config.use_mla\n"
        "        if wanted:\n"
        "            return AttentionBackendEnum.TRITON_MLA.get_path()"
    )
    unpacked = (
        "        wanted = attn_selector_config.use_mla\n"
        "        wanted, other = (attn_selector_config.use_sparse, 1)\n"
        "        if wanted:\n"
        "            return AttentionBackendEnum.TRITON_MLA.get_path()"
    )
    xpu = environment_from(platform="xpu", arch="")
    found = {}
    for name, rule in (("chained", chained), ("unpacked", unpacked)):
        tree = SourceTree(edited_demo(tmp_path / name, XPU, {MLA_RULE: rule}))
        rules = evaluate_selection(tree, xpu).rules
        found[name] = [r.conditions for r in rules if r.outcome == "TRITON_MLA"]
    assert found == {"chained": [("(use_mla)",)], "unpacked": [("wanted",)]}


def test_a_variable_set_to_a_late_word_is_tried_unset():
    """A variable read set, to any value, has "unset" for its alternative, one read
    unset has ``1`` (``value == "unset"`` -> ``>=`` took ``xformers``, which sorts
    after ``unset``, for unset)."""
    from sphinxext_attn.model.environment import Environment
    from sphinxext_attn.selection.alternatives import alternatives

    def decide(environment: Environment) -> dict:
        chosen = {"xformers": "A", "1": "C"}.get(environment.env.get("MY_VAR", ""), "B")
        return {"selected": chosen, "priorities": [], "rejected": {}}

    for value, env, selected in (("xformers", "unset", "B"), ("unset", "1", "C")):
        decision = {"selected": "A", "assumptions": [f"MY_VAR={value}"]}
        found = alternatives(decision, Environment(), decide)
        assert found == [
            {"env": {"MY_VAR": env}, "assume": {}, "option": {}, "selected": selected}
        ]
