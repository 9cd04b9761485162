"""The vLLM tree: its files read safely, its classes and registry found without importing."""
