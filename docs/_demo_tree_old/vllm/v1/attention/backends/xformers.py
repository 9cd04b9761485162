"""Demo xFormers backend: present in the previous demo release, removed since."""

from typing import ClassVar

import torch

from vllm.v1.attention.backend import AttentionBackend, AttentionImpl


class XFormersAttentionImpl(AttentionImpl):
    pass


class XFormersAttentionBackend(AttentionBackend):
    supported_dtypes: ClassVar[list[torch.dtype]] = [torch.float16, torch.bfloat16]

    @staticmethod
    def get_impl_cls() -> type[XFormersAttentionImpl]:
        return XFormersAttentionImpl

    @staticmethod
    def get_supported_head_sizes() -> list[int]:
        return [64, 80, 96, 128]
