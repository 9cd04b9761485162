"""Demo base classes shared by the backends."""


class AttentionType:
    DECODER = "decoder"
    ENCODER = "encoder"
    ENCODER_ONLY = "encoder_only"
    ENCODER_DECODER = "encoder_decoder"


class MultipleOf:
    def __init__(self, base: int) -> None:
        self.base = base


class AttentionBackend:
    """Defaults every backend inherits: fp16/bf16, `auto` KV cache, decoder only."""

    @classmethod
    def supports_sink(cls) -> bool:
        return False
