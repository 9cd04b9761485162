"""Small invented model trees: a registry, a config convertor, model files and an
attention package shaped as vLLM writes them (nothing here is vLLM code)."""

from __future__ import annotations

from pathlib import Path

from runtime_trees import runtime_tree
from treebuilder import dedent

MODELS = "vllm/model_executor/models"
CONVERTOR = "vllm/transformers_utils/model_arch_config_convertor.py"
ATTENTION = "vllm/model_executor/layers/attention"

REGISTRY_SOURCE = """
_TEXT_GENERATION_MODELS = {
    "TinyForCausalLM": ("tiny", "TinyForCausalLM"),
    "OddEvenForCausalLM": ("odd_even", "OddEvenForCausalLM"),
    "LatentForCausalLM": ("latent", "LatentForCausalLM"),
    "ShadowedModel": ("tiny", "TinyForCausalLM"),
}
_EMBEDDING_MODELS = {
    "TinyEncoderModel": ("tiny_encoder", "TinyEncoderModel"),
    "ShadowedModel": ("tiny_encoder", "TinyEncoderModel"),
}
_UNUSED_MODELS = {"NotMerged": ("tiny", "TinyForCausalLM")}
_VLLM_MODELS = {**_TEXT_GENERATION_MODELS, **_EMBEDDING_MODELS}
"""

CONVERTOR_SOURCE = """
class ModelArchConfigConvertorBase:
    def get_num_hidden_layers(self):
        return getattr(self.hf_text_config, "num_hidden_layers", 0)

    def get_total_num_attention_heads(self):
        return getattr(self.hf_text_config, "num_attention_heads", 0)

    def is_deepseek_mla(self):
        if self.hf_text_config.model_type in ("latent",):
            return getattr(self.hf_text_config, "kv_lora_rank", None) is not None
        return False

    def get_head_size(self):
        if self.is_deepseek_mla():
            return self.hf_text_config.kv_lora_rank + self.hf_text_config.qk_rope_head_dim
        head_dim = getattr(self.hf_text_config, "head_dim", None)
        if head_dim is not None:
            return head_dim
        return self.hf_text_config.hidden_size // self.get_total_num_attention_heads()


MODEL_ARCH_CONFIG_CONVERTORS = {}
"""

ATTENTION_INIT = """
from vllm.model_executor.layers.attention.attention import Attention
from vllm.model_executor.layers.attention.encoder_only_attention import EncoderOnlyAttention
"""

ATTENTION_SOURCE = """
class Attention:
    def __init__(self, num_heads, head_size, scale, per_layer_sliding_window=None, sinks=None):
        self.backend = get_attn_backend(head_size, None, "auto", has_sink=sinks is not None)
"""

MLA_SOURCE = """
class MLAAttention:
    def __init__(self, num_heads, head_size):
        self.backend = get_attn_backend(head_size, None, "auto", use_mla=True, num_heads=num_heads)
"""

#: layer_types decides the window; every layer passes sinks
TINY_SOURCE = """
from vllm.model_executor.layers.attention import Attention, EncoderOnlyAttention


class TinyAttention:
    def __init__(self, config, prefix=""):
        layer_idx = int(prefix.split(".")[2])
        self.is_sliding = config.layer_types[layer_idx] == "sliding_attention"
        sliding_window = config.sliding_window if self.is_sliding else None
        if getattr(config, "is_causal", True):
            attn_type = AttentionType.DECODER
        else:
            attn_type = AttentionType.ENCODER_ONLY
        attn_cls = EncoderOnlyAttention if attn_type == AttentionType.ENCODER_ONLY else Attention
        self.attn = attn_cls(
            8, 64, 0.125,
            per_layer_sliding_window=sliding_window,
            attn_type=attn_type,
            sinks=self.sinks,
        )


class TinyForCausalLM:
    pass
"""

#: the window on even layers, passed down from the decoder layer
ODD_EVEN_SOURCE = """
from vllm.model_executor.layers.attention import Attention


class OddEvenAttention:
    def __init__(self, config, per_layer_sliding_window=None, prefix=""):
        self.attn = Attention(8, 64, 0.125, per_layer_sliding_window=per_layer_sliding_window)


class OddEvenDecoderLayer:
    def __init__(self, config, prefix=""):
        self.layer_idx = int(prefix.split(".")[2])
        self.self_attn = OddEvenAttention(config, per_layer_sliding_window=self._window(config))

    def _window(self, config):
        return config.sliding_window if self.layer_idx % 2 == 0 else None


class OddEvenForCausalLM:
    pass
"""

LATENT_SOURCE = """
from vllm.model_executor.layers.attention import MLAAttention


class LatentAttention:
    def __init__(self, config):
        self.attn = MLAAttention(config.num_attention_heads, 576)


class LatentForCausalLM:
    pass
"""

ENCODER_SOURCE = """
from vllm.model_executor.layers.attention import EncoderOnlyAttention


class TinyEncoderModel:
    is_pooling_model = True

    def __init__(self, config):
        self.attn = EncoderOnlyAttention(12, 64, 0.125)
"""


def model_files() -> dict[str, str]:
    """The model-side files of :func:`model_tree` (to add to another test tree)."""
    return {
        f"{MODELS}/__init__.py": "",
        f"{MODELS}/registry.py": dedent(REGISTRY_SOURCE),
        f"{MODELS}/tiny.py": dedent(TINY_SOURCE),
        f"{MODELS}/odd_even.py": dedent(ODD_EVEN_SOURCE),
        f"{MODELS}/latent.py": dedent(LATENT_SOURCE),
        f"{MODELS}/tiny_encoder.py": dedent(ENCODER_SOURCE),
        CONVERTOR: dedent(CONVERTOR_SOURCE),
        f"{ATTENTION}/__init__.py": dedent(ATTENTION_INIT),
        f"{ATTENTION}/attention.py": dedent(ATTENTION_SOURCE),
        f"{ATTENTION}/mla_attention.py": dedent(MLA_SOURCE),
    }


def model_tree(root: Path, extra: dict[str, str] | None = None) -> Path:
    return runtime_tree(root, {**model_files(), **(extra or {})})


TINY = {
    "architectures": ["TinyForCausalLM"],
    "model_type": "tiny",
    "hidden_size": 512,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "num_hidden_layers": 3,
    "sliding_window": 128,
    "layer_types": ["sliding_attention", "sliding_attention", "full_attention"],
    "torch_dtype": "bfloat16",
}
