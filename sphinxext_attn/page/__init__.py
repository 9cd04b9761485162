"""The ``vllm-page`` profile: literal class bodies read as vLLM's own generator reads them."""
