# ruff: noqa
def supports_trtllm_attention():
    return current_platform.is_device_capability_family(100)
