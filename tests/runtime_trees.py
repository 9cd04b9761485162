"""Invented vLLM-shaped runtime trees for the evaluator's tests (the runtime profile).

The backend interface and platform modules here are just enough for the evaluator
to answer the questions vLLM asks a backend class; ``runtime_tree`` writes them
over :func:`treebuilder.build_tree`'s default tree and ``runtime_backend`` adds one
registered backend. Split from ``treebuilder.py`` to keep each helper module short.
Nothing here is vLLM code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from treebuilder import (
    BACKENDS,
    CUDA,
    CUDA_SOURCE,
    TRITON_MLA_BODY,
    backend_files,
    backend_source,
    build_tree,
    dedent,
    rows,
)

BACKEND_INTERFACE = "vllm/v1/attention/backend.py"
PLATFORM_INTERFACE = "vllm/platforms/interface.py"

RUNTIME_BACKEND_SOURCE = """
from abc import ABC, abstractmethod
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, ClassVar

import torch

if TYPE_CHECKING:
    from vllm.platforms.interface import DeviceCapability


class AttentionType(str, Enum):
    DECODER = "decoder"
    ENCODER = "encoder"
    ENCODER_ONLY = "encoder_only"
    ENCODER_DECODER = "encoder_decoder"


@dataclass
class MultipleOf:
    base: int


class AttentionBackend(ABC):
    supported_dtypes: ClassVar[list[torch.dtype]] = [torch.float16, torch.bfloat16]
    supported_kv_cache_dtypes: ClassVar[list[str]] = ["auto", "bfloat16"]

    @staticmethod
    def get_supported_kernel_block_sizes():
        return [MultipleOf(1)]

    @staticmethod
    @abstractmethod
    def get_impl_cls():
        raise NotImplementedError

    @classmethod
    def get_supported_head_sizes(cls):
        return []

    @classmethod
    def supports_head_size(cls, head_size):
        supported = cls.get_supported_head_sizes()
        return (not supported) or head_size in supported

    @classmethod
    def supports_dtype(cls, dtype):
        return dtype in cls.supported_dtypes

    @classmethod
    def supports_kv_cache_dtype(cls, kv_cache_dtype):
        if kv_cache_dtype is None:
            return True
        return (not cls.supported_kv_cache_dtypes) or (
            kv_cache_dtype in cls.supported_kv_cache_dtypes
        )

    @classmethod
    def is_mla(cls):
        return False

    @classmethod
    def supports_sink(cls):
        return False

    @classmethod
    def supports_mm_prefix(cls):
        return False

    @classmethod
    def is_sparse(cls):
        return False

    @classmethod
    def supports_non_causal(cls):
        return False

    @classmethod
    def supports_dcp(cls):
        try:
            return cls.get_impl_cls().supports_dcp
        except NotImplementedError:
            return False

    @classmethod
    def supports_attn_type(cls, attn_type):
        return attn_type == AttentionType.DECODER

    @classmethod
    def supports_compute_capability(cls, capability):
        return True
"""

RUNTIME_INTERFACE_SOURCE = """
import enum
from typing import Any, NamedTuple


class PlatformEnum(enum.Enum):
    CUDA = enum.auto()
    ROCM = enum.auto()


class DeviceCapability(NamedTuple):
    major: int
    minor: int

    def __lt__(self, other: Any) -> bool:
        if not isinstance(other, DeviceCapability):
            return NotImplemented
        return (self.major, self.minor) < (other.major, other.minor)

    def __le__(self, other: Any) -> bool:
        if not isinstance(other, DeviceCapability):
            return NotImplemented
        return (self.major, self.minor) <= (other.major, other.minor)

    def __ge__(self, other: Any) -> bool:
        if not isinstance(other, DeviceCapability):
            return NotImplemented
        return (self.major, self.minor) >= (other.major, other.minor)

    def __gt__(self, other: Any) -> bool:
        if not isinstance(other, DeviceCapability):
            return NotImplemented
        return (self.major, self.minor) > (other.major, other.minor)

    def as_version_str(self) -> str:
        return f"{self.major}.{self.minor}"

    def to_int(self) -> int:
        assert 0 <= self.minor < 10
        return self.major * 10 + self.minor


class Platform:
    _enum: PlatformEnum

    @classmethod
    def get_device_capability(cls, device_id: int = 0):
        return None

    @classmethod
    def has_device_capability(cls, capability, device_id: int = 0) -> bool:
        current = cls.get_device_capability(device_id=device_id)
        if current is None:
            return False
        if isinstance(capability, tuple):
            return current >= capability
        return current.to_int() >= capability

    @classmethod
    def is_device_capability_family(cls, capability: int, device_id: int = 0) -> bool:
        current = cls.get_device_capability(device_id=device_id)
        if current is None:
            return False
        return (current.to_int() // 10) == (capability // 10)

    def is_cuda(self) -> bool:
        return self._enum == PlatformEnum.CUDA
"""

RUNTIME_CUDA_PLATFORM = """

import torch

from .interface import DeviceCapability, Platform, PlatformEnum


class CudaPlatformBase(Platform):
    _enum = PlatformEnum.CUDA

    @classmethod
    def get_device_capability(cls, device_id: int = 0):
        major, minor = torch.cuda.get_device_capability(device_id)
        return DeviceCapability(major=major, minor=minor)
"""

RUNTIME_FILES: dict[str, str] = {
    BACKEND_INTERFACE: dedent(RUNTIME_BACKEND_SOURCE),
    PLATFORM_INTERFACE: dedent(RUNTIME_INTERFACE_SOURCE),
    "vllm/platforms/__init__.py": '"""platforms (test tree)."""\n',
    CUDA: dedent(CUDA_SOURCE) + RUNTIME_CUDA_PLATFORM,
    f"{BACKENDS}/mla/triton_mla.py": backend_source(
        "TritonMLABackend", TRITON_MLA_BODY + "\n@classmethod\ndef is_mla(cls):\n    return True\n"
    ),
}


def runtime_tree(root: Path, files: dict[str, str | bytes | None] | None = None) -> Path:
    """The default tree plus the backend interface and platform modules the evaluator reads."""
    return build_tree(root, {**RUNTIME_FILES, **(files or {})})


def runtime_backend(root: Path, body: str, **kwargs: Any) -> Path:
    """:func:`runtime_tree` plus one registered backend (:func:`backend_files`)."""
    return runtime_tree(root, backend_files(body, **kwargs))


#: The module :func:`runtime_backend` writes its backend class to by default.
FILE = "vllm/v1/attention/backends/my_attn.py"


def only(analysis: Any, name: str) -> Any:
    """The single row of backend ``name`` (asserts there is one, showing the diagnostics)."""
    found = rows(analysis, name)
    assert len(found) == 1, (name, found, analysis.diagnostics)
    return found[0]
