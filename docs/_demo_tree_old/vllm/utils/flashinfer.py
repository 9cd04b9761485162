"""Demo FlashInfer helpers."""

from vllm.platforms import current_platform


def supports_trtllm_attention() -> bool:
    return current_platform.is_device_capability_family(100)
