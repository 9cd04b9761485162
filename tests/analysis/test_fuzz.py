"""Property: whatever happens to the backend files, analysis returns records plus
diagnostics and never raises; files left alone keep their rows.

``ATTN_FUZZ_EXAMPLES`` sets the number of examples (CI: 1000). Each example
rewrites the few files of one tiny template tree and analyses it.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest
from containment import CAN_CONTAIN, contain, progress
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from source_damage import TOKENS, mutate
from treebuilder import (
    BACKENDS,
    CUDA,
    DEFAULT_FILES,
    FA_UTILS,
    REGISTRY,
    analyze_page,
    backend_source,
    build_tree,
)

from sphinxext_attn.model.records import Analysis, Diagnostic
from sphinxext_attn.render.jsonout import render_json
from sphinxext_attn.render.markdown import render_markdown

EXAMPLES = int(os.environ.get("ATTN_FUZZ_EXAMPLES", "200"))

RICH_BODY = """
supported_dtypes: ClassVar[list[torch.dtype]] = [torch.float16, torch.bfloat16]
supported_kv_cache_dtypes: ClassVar[list[str]] = ["auto", "fp8"]

@staticmethod
def get_supported_kernel_block_sizes():
    return [MultipleOf(16), 32]

@classmethod
def get_supported_head_sizes(cls):
    if cls.flag:
        return []
    return [64, 128, 256]

@classmethod
def supports_compute_capability(cls, capability):
    if capability.major in [9, 10]:
        return True
    return capability >= DeviceCapability(8, 0) and capability <= DeviceCapability(12, 1)

@classmethod
def supports_attn_type(cls, attn_type):
    return attn_type in (AttentionType.DECODER, AttentionType.ENCODER_ONLY)

@classmethod
def supports_kv_cache_dtype(cls, kv_cache_dtype):
    return kv_cache_dtype in ["auto", "bfloat16"]

@classmethod
def supports_sink(cls):
    return True

@classmethod
def is_mla(cls):
    return False
"""

FLASH = f"{BACKENDS}/flash_attn.py"
MLA = f"{BACKENDS}/mla/triton_mla.py"
#: Files the fuzzer may damage, and the backend whose row each one carries.
TARGETS: dict[str, str | None] = {
    FLASH: "FLASH_ATTN",
    MLA: "TRITON_MLA",
    f"{BACKENDS}/triton_attn.py": "TRITON_ATTN",
    REGISTRY: None,
    CUDA: None,
    FA_UTILS: None,
}
ORIGINAL: dict[str, bytes] = {
    **{rel: DEFAULT_FILES[rel].encode() for rel in TARGETS},
    FLASH: backend_source("FlashAttentionBackend", RICH_BODY).encode(),
}
op = st.one_of(
    st.tuples(st.just("delete"), st.integers(0, 10_000)),
    st.tuples(st.just("duplicate"), st.integers(0, 10_000)),
    st.tuples(st.just("replace_line"), st.integers(0, 10_000), st.integers(0, 10_000)),
    st.tuples(st.just("token"), st.integers(0, 100_000), st.sampled_from(TOKENS)),
    st.tuples(st.just("retoken"), st.integers(0, 100_000), st.sampled_from(TOKENS)),
    st.tuples(st.just("bytes"), st.integers(0, 100_000), st.binary(min_size=1, max_size=8)),
    st.tuples(st.just("truncate"), st.integers(0, 100_000)),
)


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    root = build_tree(tmp_path_factory.mktemp("fuzz") / "tree")
    (root / FLASH).write_bytes(ORIGINAL[FLASH])
    return root


def check(analysis: Analysis, damaged: set[str]) -> None:
    assert isinstance(analysis, Analysis)
    assert all(isinstance(d, Diagnostic) for d in analysis.diagnostics)
    for d in analysis.diagnostics:
        assert d.location is None or not Path(d.location.path).is_absolute()
    render_markdown(analysis)
    render_json(analysis)
    if REGISTRY not in damaged:
        have = {r.name for r in analysis.backends}
        for rel, name in TARGETS.items():
            if name and rel not in damaged:
                assert name in have, (rel, analysis.diagnostics)
    if CUDA not in damaged:
        assert len(analysis.priorities) == 4


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)
@given(
    changes=st.dictionaries(
        st.sampled_from(sorted(TARGETS)), st.lists(op, min_size=1, max_size=6), max_size=3
    )
)
def mutated_trees_never_raise(template: Path, changes: dict[str, list[tuple]]) -> None:
    progress(changes)  # named if it hangs
    damaged = set()
    for rel, original in ORIGINAL.items():
        data = mutate(original, changes[rel]) if rel in changes else original
        if data != original:
            damaged.add(rel)
        (template / rel).write_bytes(data)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        analysis = analyze_page(template)
    assert [str(w.message) for w in seen] == []  # the analysed code's warnings stay inside
    check(analysis, damaged)


#: The fuzzing runs in a forked child, killed when no example has started for this many
#: seconds (an example takes milliseconds): a hang is contained and its example named.
IDLE = 120.0


@pytest.mark.slow
@pytest.mark.skipif(not CAN_CONTAIN, reason="the containment needs fork() and /proc (Linux)")
def test_mutated_trees_never_raise(template):
    """Hypothesis's falsifying example is in the failure's notes."""
    out = contain(mutated_trees_never_raise, template, idle=IDLE)
    assert out.kind == "done" and out.value is None, (
        f"{out.kind}: {out.detail}\nlast example: {out.last!r}"
    )


def test_unmutated_template_is_clean(template):
    for rel, original in ORIGINAL.items():
        (template / rel).write_bytes(original)
    analysis = analyze_page(template)
    assert analysis.diagnostics == []
    flash = [r for r in analysis.backends if r.name == "FLASH_ATTN"]
    assert flash and flash[0].cell("Block Sizes") == "%16, 32"
    assert flash[0].cell("Compute Cap.") == "9.x-10.x"
    assert flash[0].cell("Attention Types") == "Decoder, Encoder Only"
    check(analysis, set())


def test_mutations_do_damage():
    """Self-check: the mutation operators really change files."""
    data = ORIGINAL[FLASH]
    assert mutate(data, [("truncate", 10)]) == data[:10]
    assert mutate(data, [("delete", 0)]) != data
    assert b"\xff" in mutate(data, [("bytes", 5, b"\xff")])
