"""Demo FlashAttention helpers: which FA version runs where."""

from vllm.platforms import current_platform


def get_flash_attn_version() -> int:
    device_capability = current_platform.get_device_capability()
    return 3 if (device_capability.major == 9 and current_platform.is_cuda()) else 2


def flash_attn_supports_fp8() -> bool:
    return get_flash_attn_version() == 3


def flash_attn_supports_sinks() -> bool:
    return get_flash_attn_version() == 3
