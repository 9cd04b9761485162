"""A page's platforms on a tree that lacks one: the others are offered, the missing
one is named (never a failed selector), on the small demo tree."""

from __future__ import annotations

import pytest
from treebuilder import DEMO_TREE

from sphinxext_attn.pyeval import Unknown
from sphinxext_attn.selector import variants as selector_variants
from sphinxext_attn.selector.table import build_selector_table


def test_a_platform_the_tree_lacks_is_named_not_fatal(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_gpus(*args: object) -> list[str]:
        raise Unknown("no detection plugin for the rocm platform", "vllm/platforms/__init__.py")

    monkeypatch.setattr(selector_variants, "named_archs", no_gpus)
    built = build_selector_table(str(DEMO_TREE), sample=0, platforms=("cuda", "rocm", "cpu"))
    assert built.table is not None and built.default == "cuda"
    assert list(built.variants) == ["cuda", "cpu"]
    assert built.problems == [
        "rocm: no detection plugin for the rocm platform (vllm/platforms/__init__.py)"
    ]
