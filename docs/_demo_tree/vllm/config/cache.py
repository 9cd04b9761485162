"""Demo cache config: the KV cache data types a user can ask for."""

from typing import Literal

CacheDType = Literal["auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_ds_mla"]
