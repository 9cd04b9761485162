# ruff: noqa
def get_flash_attn_version(device_capability):
    return 3 if (device_capability.major == 9 and is_fa3_supported()) else 2


def flash_attn_supports_fp8():
    return get_flash_attn_version() == 3


def flash_attn_supports_sinks():
    return get_flash_attn_version() == 3
