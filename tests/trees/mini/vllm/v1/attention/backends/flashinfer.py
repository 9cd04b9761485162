# ruff: noqa
class FlashInferBackend:
    supported_kv_cache_dtypes: list = ["auto", "fp8"]

    @staticmethod
    def get_supported_kernel_block_sizes():
        return [16, 32]

    @classmethod
    def supports_compute_capability(cls, capability):
        return capability >= DeviceCapability(7, 5) and capability <= DeviceCapability(12, 1)
