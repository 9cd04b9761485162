"""Kept answers after an edit rest on the statements they read (issue 22).

A unit of the runtime profile is asked again only when a view it read of an
edited file changed (``source/views.py``): appending a comment to a backend
file asks nothing again; editing a method asks again
the backends whose answers read its class; moving lines asks again every
answer that carries a line of the file. Each edit's outputs (page, JSON,
selections) must equal those of the edited tree analysed from scratch
(tests/edit_runs.py), the honesty check of the reuse.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from edit_runs import changed_outputs, pristine

VERSION = "0.33.0"
BACKENDS = "vllm/v1/attention/backends"
FLASH_ATTN = f"{BACKENDS}/flash_attn.py"


def backends_asked(asked: list[str]) -> set[str]:
    return {
        key.split("name='", 1)[1].split("'", 1)[0] for key in asked if key.startswith("('backend'")
    }


def replacing(old: str, new: str) -> Callable[[str], str]:
    def change(text: str) -> str:
        assert text.count(old) == 1, f"{old!r} is not once in the file"
        return text.replace(old, new)

    return change


def honest(rel: str, change: Callable[[str], str]) -> tuple[dict[str, str], list[str]]:
    """The cheap outputs (with what was asked again), checked against a fresh analysis."""
    cheap, asked = changed_outputs(VERSION, rel, change)
    fresh, _ = changed_outputs(VERSION, rel, change, cheap=False)
    assert {**pristine(VERSION).outputs, **cheap} == fresh
    return cheap, asked


@pytest.mark.realtree
@pytest.mark.parametrize("name", ["flash_attn", "triton_attn", "flex_attention"])
def test_an_appended_comment_asks_nothing_again(name):
    """Not even the file's syntax check: it found nothing, and comments appended
    to a file that parses leave it parsing (``source.views.code_text``)."""
    _, asked = honest(f"{BACKENDS}/{name}.py", lambda text: text + "# an edit\n")
    assert asked == []


@pytest.mark.realtree
def test_a_method_body_asks_again_the_backends_reading_its_class():
    old = '"fused output quantization is not yet supported for FlashAttentionImpl"'
    _, asked = honest(FLASH_ATTN, replacing(old, '"fused output quantization: not supported"'))
    found = backends_asked(asked)
    assert "FLASH_ATTN" in found  # its impl class changed
    assert not found & {"TRITON_ATTN", "FLEX_ATTENTION", "FLASHINFER"}


@pytest.mark.realtree
@pytest.mark.parametrize(
    ("old", "new", "readers"),
    [
        ("return not current_platform.is_xpu()", "return not current_platform.is_rocm()", set()),
        ("return get_flash_attn_version() in (3, 4)", "return False", {"FLASH_ATTN"}),
    ],
)
def test_a_helper_function_asks_again_the_answers_that_called_it(old, new, readers):
    """fa_utils.py is read by several backends, each calling a few of its functions."""
    _, asked = honest(f"{BACKENDS}/fa_utils.py", replacing(old, new))
    found = backends_asked(asked)
    assert readers <= found
    assert not found & {"TRITON_ATTN", "FLEX_ATTENTION", "FLASHINFER"}
    if not readers:
        assert found == set()


@pytest.mark.realtree
def test_moved_lines_ask_again_every_answer_carrying_a_line():
    """A statement added near the top moves every line after it: the outputs name
    the new lines (as a fresh analysis does), not the kept ones."""
    old = "\nimport vllm.envs as envs\n"
    cheap, asked = honest(FLASH_ATTN, replacing(old, old + "\n_EDITED = 1\n"))
    assert cheap["json"] != pristine(VERSION).outputs["json"]  # lines in the output moved
    assert "FLASH_ATTN" in backends_asked(asked)
