"""The decision for one configuration: the platforms' rules and lists, vLLM's
reasons and where its code states them, and the inputs that ask."""
