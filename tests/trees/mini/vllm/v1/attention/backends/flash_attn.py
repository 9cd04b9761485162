# ruff: noqa
class FlashAttentionBackend:
    supported_dtypes: list = [torch.float16, torch.bfloat16]
    supported_kv_cache_dtypes: list = ["auto", "bfloat16"]

    @staticmethod
    def get_supported_kernel_block_sizes():
        return [MultipleOf(16)]

    @classmethod
    def supports_attn_type(cls, attn_type):
        return attn_type in (
            AttentionType.DECODER,
            AttentionType.ENCODER,
            AttentionType.ENCODER_DECODER,
        )

    @classmethod
    def supports_compute_capability(cls, capability):
        return capability >= DeviceCapability(8, 0)
