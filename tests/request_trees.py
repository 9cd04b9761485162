"""A small tree whose platforms answer a backend asked for the way vLLM's do:
CUDA checks the requested class (``validate_configuration``) and refuses with its
reasons; XPU's rules take a request for the backends they know, ignore another,
and refuse MLA with a message that lists no reasons."""

from __future__ import annotations

import shutil
from pathlib import Path

from treebuilder import DEMO_TREE

CUDA = "vllm/platforms/cuda.py"
XPU = "vllm/platforms/xpu.py"
#: vLLM's request branch on CUDA: the requested class's own check, a refusal
#: listing its reasons
REQUEST_BRANCH = """
    @classmethod
    def get_attn_backend_cls(
        cls,
        selected_backend: "AttentionBackendEnum | None",
        attn_selector_config: "AttentionSelectorConfig",
        num_heads: int | None = None,
    ) -> str:
        device_capability = cls.get_device_capability()
        if selected_backend is not None:
            backend_class = selected_backend.get_class()
            invalid_reasons = backend_class.validate_configuration(
                device_capability=device_capability,
                **attn_selector_config._asdict(),
            )
            if invalid_reasons:
                raise ValueError(
                    f"Selected backend {selected_backend} is not valid for "
                    f"this configuration. Reason: {invalid_reasons}"
                )
            return selected_backend.get_path()
        valid, invalid = cls.get_valid_backends(
            device_capability, attn_selector_config, num_heads
        )
        return min(valid, key=lambda candidate: candidate.priority).backend.get_path()
"""
#: XPU rules that take a request for the backends they know, ignore another, and
#: refuse MLA with a message that lists no reasons
XPU_RULES = """
    @classmethod
    def get_attn_backend_cls(cls, selected_backend, attn_selector_config, num_heads=None) -> str:
        if selected_backend == AttentionBackendEnum.TRITON_ATTN:
            return AttentionBackendEnum.TRITON_ATTN.get_path()
        if selected_backend is not None and selected_backend != AttentionBackendEnum.FLASH_ATTN:
            del selected_backend
        if attn_selector_config.use_mla:
            raise ValueError(f"MLA is not supported on XPU: {[attn_selector_config.head_size]}")
        return AttentionBackendEnum.FLASH_ATTN.get_path()
"""


def request_tree(root: Path) -> Path:
    """The demo tree at ``root`` with those two platforms' ``get_attn_backend_cls``."""
    shutil.copytree(DEMO_TREE, root)
    for rel, method in ((CUDA, REQUEST_BRANCH), (XPU, XPU_RULES)):
        text = (root / rel).read_text(encoding="utf-8")
        start = text.index("    @classmethod\n    def get_attn_backend_cls(")
        (root / rel).write_text(text[:start] + method.lstrip("\n"), encoding="utf-8")
    return root
