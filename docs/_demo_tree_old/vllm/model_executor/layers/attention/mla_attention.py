"""Demo MLA prefill switches."""

from vllm.platforms import current_platform


def use_flashinfer_prefill() -> bool:
    return current_platform.is_device_capability_family(100)


def use_cudnn_prefill() -> bool:
    return current_platform.is_device_capability_family(100)


def use_trtllm_ragged_deepseek_prefill() -> bool:
    return current_platform.is_device_capability_family(100)
