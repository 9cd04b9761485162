# ruff: noqa
def use_flashinfer_prefill():
    return current_platform.is_device_capability_family(100)


def use_trtllm_ragged_deepseek_prefill():
    return current_platform.is_device_capability_family(100)
