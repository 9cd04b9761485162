# ruff: noqa
class TritonAttentionBackend:
    supported_dtypes: list = [torch.float16, torch.bfloat16, torch.float32]
    supported_kv_cache_dtypes: list = ["auto", "fp8"]

    @staticmethod
    def get_supported_head_sizes():
        return [64, 128, 256]

    @classmethod
    def supports_sink(cls):
        return True
