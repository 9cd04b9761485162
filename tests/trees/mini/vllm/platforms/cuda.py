# ruff: noqa
def _get_backend_priorities(use_mla, device_capability):
    if use_mla:
        if device_capability.major == 10:
            return [AttentionBackendEnum.TRITON_MLA]
        else:
            return [AttentionBackendEnum.TRITON_MLA]
    else:
        if device_capability.major == 10:
            return [
                AttentionBackendEnum.FLASHINFER,
                AttentionBackendEnum.FLASH_ATTN,
                AttentionBackendEnum.TRITON_ATTN,
            ]
        else:
            return [
                AttentionBackendEnum.FLASH_ATTN,
                AttentionBackendEnum.FLASHINFER,
                AttentionBackendEnum.TRITON_ATTN,
            ]
