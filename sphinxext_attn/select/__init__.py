"""Selection: vLLM's decision for a configuration, its priority lists, the selector's table."""
