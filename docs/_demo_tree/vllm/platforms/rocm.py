"""Demo ROCm platform: the GPU arch comes from amdsmi at import, and an AITER switch
(an environment variable, and whether the aiter package is installed) edits the list."""

import os
from functools import wraps
from importlib.util import find_spec

import regex as re

from vllm.platforms.interface import DeviceCapability, Platform, PlatformEnum
from vllm.v1.attention.backends.registry import AttentionBackendEnum

try:  # noqa: SIM105 (written as vLLM writes it)
    from amdsmi import amdsmi_get_gpu_asic_info, amdsmi_get_processor_handles, amdsmi_init
except ImportError:
    pass


def with_amdsmi_context(fn):
    @wraps(fn)
    def wrapper(*args, **kwargs):
        amdsmi_init()
        return fn(*args, **kwargs)

    return wrapper


@with_amdsmi_context
def _query_gcn_arch() -> str:
    handles = amdsmi_get_processor_handles()
    return amdsmi_get_gpu_asic_info(handles[0])["target_graphics_version"]


_GCN_ARCH = _query_gcn_arch()
_ON_GFX9 = any(arch in _GCN_ARCH for arch in ["gfx90a", "gfx942", "gfx950"])
_ON_RDNA = any(arch in _GCN_ARCH for arch in ["gfx1100", "gfx1201"])
IS_AITER_FOUND = find_spec("aiter") is not None


def on_gfx9() -> bool:
    return _ON_GFX9


def on_rdna() -> bool:
    return _ON_RDNA


def use_aiter() -> bool:
    """AITER is used when it is installed, the GPU is a gfx9 one and the user asks."""
    return IS_AITER_FOUND and on_gfx9() and os.getenv("VLLM_ROCM_USE_AITER", "0") == "1"


def _get_backend_priorities(use_mla: bool, use_kv_connector: bool = False) -> list:
    if use_mla:
        return [AttentionBackendEnum.TRITON_MLA]
    backends = []
    if not use_kv_connector:
        backends.append(AttentionBackendEnum.ROCM_ATTN)
    if use_aiter():
        backends.append(AttentionBackendEnum.FLASH_ATTN)
    backends.append(AttentionBackendEnum.TRITON_ATTN)
    if on_rdna():  # RDNA GPUs try Triton first
        backends = backends[::-1]
    return backends


def _capability_from_arch(arch: str) -> tuple[int, int] | None:
    """gfx942 -> (9, 4), gfx1100 -> (11, 0)."""
    m = re.match(r"gfx(\d+)", arch)
    if not m:
        return None
    digits = m.group(1)
    if len(digits) == 4:
        major, minor = int(digits[:2]), int(digits[2])
    else:
        major, minor = int(digits[0]), int(digits[1])
    if major < 9:  # gfx11 is a family, not one GPU
        raise ValueError(f"{arch} names no GPU")
    return major, minor


class RocmPlatform(Platform):
    _enum = PlatformEnum.ROCM

    @classmethod
    def get_device_capability(cls, device_id: int = 0) -> DeviceCapability | None:
        cap = _capability_from_arch(_GCN_ARCH)
        return DeviceCapability(cap[0], cap[1]) if cap is not None else None

    @classmethod
    def get_valid_backends(cls, device_capability, attn_selector_config, num_heads=None):
        """Each backend of the list, valid (with its place) or with its reasons."""
        valid = []
        invalid = {}
        backends = _get_backend_priorities(
            attn_selector_config.use_mla, attn_selector_config.use_kv_connector
        )
        for priority, backend in enumerate(backends):
            reasons = backend.get_class().validate_configuration(
                device_capability=device_capability, **attn_selector_config._asdict()
            )
            if reasons:
                invalid[backend] = (priority, reasons)
            else:
                valid.append((backend, priority))
        return valid, invalid
