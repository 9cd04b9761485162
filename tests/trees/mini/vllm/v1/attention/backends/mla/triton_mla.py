# ruff: noqa
class TritonMLABackend(MLACommonBackend):
    supported_kv_cache_dtypes: list = ["auto", "bfloat16"]
