"""Will the engine start: the selected backend's implementation ``__init__`` is
run leniently on the question's GPU; a ``raise`` reached is the refusal in
vLLM's words, a check that cannot be evaluated leaves the start open."""

from __future__ import annotations

from pathlib import Path

from runtime_trees import runtime_backend

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.model.selection import Config
from sphinxext_attn.models.start_check import check_start
from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.source.tree import SourceTree

HEADER = """
from vllm.platforms import current_platform


class CommonImpl:
    def __init__(self, num_heads, head_size, scale, num_kv_heads, alibi_slopes,
                 sliding_window, kv_cache_dtype, logits_soft_cap, attn_type,
                 kv_sharing_target_layer_name, **extra):
        self.kv_cache_dtype = kv_cache_dtype
        self.device = torch.cuda.current_device()


class AbstractImpl:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError


class MyImpl(CommonImpl):
    def __init__(self, num_heads, head_size, scale, num_kv_heads, alibi_slopes,
                 sliding_window, kv_cache_dtype, logits_soft_cap, attn_type,
                 kv_sharing_target_layer_name, **extra):
        super().__init__(num_heads, head_size, scale, num_kv_heads, alibi_slopes,
                         sliding_window, kv_cache_dtype, logits_soft_cap, attn_type,
                         kv_sharing_target_layer_name, **extra)
        dev = torch.cuda.get_device_name()
        fp8 = self.kv_cache_dtype.startswith("fp8")
        if fp8 and not current_platform.has_device_capability(89):
            cap = current_platform.get_device_capability().as_version_str()
            raise ValueError(f"FP8 KV cache is not supported on {dev} (compute capability {cap})")
        if head_size > 256 and torch.cuda.is_available():
            raise ValueError("head size too large here")


class OpenImpl(AbstractImpl):
    def __init__(self, num_heads, head_size, scale, num_kv_heads, alibi_slopes,
                 sliding_window, kv_cache_dtype, logits_soft_cap, attn_type,
                 kv_sharing_target_layer_name):
        if torch.version.hip and kv_cache_dtype == "fp8":
            raise ValueError("not on this GPU")
"""

BODY = """
@staticmethod
def get_impl_cls():
    return MyImpl
"""


def _interp(tmp_path: Path, impl: str = "MyImpl") -> Interpreter:
    root = runtime_backend(tmp_path / "tree", BODY.replace("MyImpl", impl), header=HEADER)
    return Interpreter(SourceTree(root), Machine())


def _line(tmp_path: Path, text: str) -> int:
    source = (tmp_path / "tree/vllm/v1/attention/backends/my_attn.py").read_text()
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def test_the_implementation_refuses_fp8_below_sm89_in_vllms_words(tmp_path: Path):
    interp = _interp(tmp_path)
    check = check_start(interp, "MY_ATTN", Config(capability="8.0", kv_cache_dtype="fp8"), 8)
    assert check.error is not None
    assert check.error.startswith("ValueError: FP8 KV cache is not supported on {dev}")
    assert check.error.endswith("(compute capability 8.0)")
    assert check.where is not None and check.where.endswith(
        f"my_attn.py:{_line(tmp_path, 'raise ValueError(f')}"
    )
    for capability, kv in (("8.9", "fp8"), ("8.0", "auto")):
        ok = check_start(interp, "MY_ATTN", Config(capability=capability, kv_cache_dtype=kv), 8)
        assert ok.error is None
    # the head-size check reads torch: not evaluated, so the start is open
    big = check_start(interp, "MY_ATTN", Config(capability="9.0", head_size=512), 8)
    assert (
        big.error is None
        and big.unknown is not None
        and f"my_attn.py:{_line(tmp_path, 'if head_size > 256')}" in big.unknown
    )


def test_an_abstract_parents_init_is_not_a_refusal_and_torch_leaves_it_open(tmp_path: Path):
    interp = _interp(tmp_path, "OpenImpl")
    check = check_start(interp, "MY_ATTN", Config(capability="9.0", kv_cache_dtype="fp8"), 8)
    assert check.error is None
    assert check.unknown is not None  # torch.version.hip is outside the tree


def test_no_backend_has_nothing_to_start(tmp_path: Path):
    assert check_start(_interp(tmp_path), None, Config(), None).error is None
