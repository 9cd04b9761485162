"""Write small, invented vLLM-shaped source trees for tests.

``build_tree(tmp_path, {"relative/path.py": "source", ...})`` writes the
default minimal tree below with the given files added or replaced (a value of
``None`` removes a default file; ``bytes`` are written as they are) and
returns the root (the folder holding ``vllm/``). Nothing here is vLLM code:
it only has the shapes the analysis looks for.
"""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sphinxext_attn.analysis.pipeline import analyze
from sphinxext_attn.model.records import Analysis, BackendFeatures


def analyze_page(root: str | Path, **kwargs: Any) -> Analysis:
    """``analyze()`` with the vllm-page profile: the rules of vLLM's own page, which
    most tests on invented trees pin (runtime-profile tests call ``analyze``)."""
    return analyze(root, profile="vllm-page", **kwargs)


#: The repository, and the small invented trees its docs ship (tests read them too).
REPO = Path(__file__).resolve().parent.parent
DEMO_TREE = REPO / "docs" / "_demo_tree"
DEMO_OLD_TREE = REPO / "docs" / "_demo_tree_old"


def edited_demo_tree(tmp_path: Path, rel: str, edit: Callable[[str], str]) -> Path:
    """A copy of the demo tree at ``tmp_path/tree`` whose file ``rel`` is ``edit(text)``."""
    root = tmp_path / "tree"
    shutil.copytree(DEMO_TREE, root)
    path = root / rel
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")
    return root


def replace_once(old: str, new: str) -> Callable[[str], str]:
    """An edit for :func:`edited_demo_tree`: the first ``old`` (it must be there) made ``new``."""

    def edit(text: str) -> str:
        assert old in text
        return text.replace(old, new, 1)

    return edit


BACKENDS = "vllm/v1/attention/backends"
REGISTRY = f"{BACKENDS}/registry.py"
CUDA = "vllm/platforms/cuda.py"
FA_UTILS = f"{BACKENDS}/fa_utils.py"
FLASHINFER_UTILS = "vllm/utils/flashinfer.py"
MLA_ATTENTION = "vllm/model_executor/layers/attention/mla_attention.py"

#: Default registry members -> class paths.
DEFAULT_ENTRIES: dict[str, str] = {
    "FLASH_ATTN": "vllm.v1.attention.backends.flash_attn.FlashAttentionBackend",
    "TRITON_ATTN": "vllm.v1.attention.backends.triton_attn.TritonAttentionBackend",
    "FLASHINFER": "vllm.v1.attention.backends.flashinfer.FlashInferBackend",
    "TRITON_MLA": "vllm.v1.attention.backends.mla.triton_mla.TritonMLABackend",
    "CPU_ATTN": "vllm.v1.attention.backends.cpu_attn.CPUAttentionBackend",
    "TORCH_SDPA": "",
}


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def registry_source(entries: dict[str, str], enum_name: str = "AttentionBackendEnum") -> str:
    """A registry module: ``class <enum_name>(Enum):`` with one member per entry."""
    lines = ["from enum import Enum", "", "", f"class {enum_name}(Enum):"]
    lines += [f"    {name} = {path!r}" for name, path in entries.items()] or ["    pass"]
    return "\n".join(lines) + "\n"


def backend_source(class_name: str, body: str = "", bases: str = "AttentionBackend") -> str:
    """A backend module with one class; ``body`` is the class body (any indentation)."""
    inner = textwrap.indent(dedent(body) or "pass\n", "    ")
    return (
        "import torch\n\n"
        "from vllm.v1.attention.backend import AttentionBackend, AttentionType, MultipleOf\n"
        "from vllm.platforms.interface import DeviceCapability\n\n\n"
        f"class {class_name}({bases}):\n{inner}"
    )


FLASH_ATTN_BODY = """
supported_dtypes = [torch.float16, torch.bfloat16]

@staticmethod
def get_supported_kernel_block_sizes():
    return [MultipleOf(16)]

@classmethod
def get_supported_head_sizes(cls):
    return [64, 128, 256]

@classmethod
def supports_attn_type(cls, attn_type):
    return attn_type in (
        AttentionType.DECODER,
        AttentionType.ENCODER,
        AttentionType.ENCODER_ONLY,
        AttentionType.ENCODER_DECODER,
    )

@classmethod
def supports_compute_capability(cls, capability):
    return capability >= DeviceCapability(8, 0)
"""

TRITON_BODY = """
supported_dtypes = [torch.float16, torch.bfloat16, torch.float32]
supported_kv_cache_dtypes = ["auto", "fp8", "fp8_e4m3"]

@staticmethod
def get_supported_kernel_block_sizes():
    return [MultipleOf(16)]

@classmethod
def supports_sink(cls):
    return True

@classmethod
def supports_mm_prefix(cls):
    return True
"""

FLASHINFER_BODY = """
@classmethod
def supports_kv_cache_dtype(cls, kv_cache_dtype):
    return kv_cache_dtype in ["auto", "fp8", "fp8_e5m2"]

@staticmethod
def get_supported_kernel_block_sizes():
    return [16, 32, 64]

@classmethod
def supports_compute_capability(cls, capability):
    return capability >= DeviceCapability(7, 5) and capability <= DeviceCapability(12, 1)
"""

TRITON_MLA_BODY = """
@classmethod
def get_supported_head_sizes(cls):
    return [576]
"""

CPU_BODY = """
supported_dtypes = [torch.float16, torch.bfloat16, torch.float32]

@classmethod
def supports_compute_capability(cls, capability):
    return capability.major == 9
"""

CUDA_SOURCE = """
from vllm.v1.attention.backends.registry import AttentionBackendEnum


def _get_backend_priorities(use_mla, device_capability):
    if use_mla:
        if device_capability.major == 10:
            return [AttentionBackendEnum.TRITON_MLA]
        else:
            return [AttentionBackendEnum.TRITON_MLA]
    else:
        if device_capability.major == 10:
            return [
                AttentionBackendEnum.FLASHINFER,
                AttentionBackendEnum.FLASH_ATTN,
                AttentionBackendEnum.TRITON_ATTN,
            ]
        else:
            return [
                AttentionBackendEnum.FLASH_ATTN,
                AttentionBackendEnum.FLASHINFER,
                AttentionBackendEnum.TRITON_ATTN,
            ]
"""

FA_UTILS_SOURCE = """
from vllm.platforms import current_platform


def get_flash_attn_version(requires_alibi=False):
    cap = current_platform.get_device_capability()
    version = 3 if (cap.major == 9 and not requires_alibi) else 2
    return version


def flash_attn_supports_fp8():
    return get_flash_attn_version() == 3 and current_platform.has_fp8()


def flash_attn_supports_sinks():
    return get_flash_attn_version() == 3
"""

FLASHINFER_UTILS_SOURCE = """
from vllm.platforms import current_platform


def supports_trtllm_attention():
    return current_platform.is_device_capability_family(100) and has_kernels()
"""

MLA_ATTENTION_SOURCE = """
from vllm.platforms import current_platform


class MLACommonBackend:
    pass


def use_flashinfer_prefill():
    return current_platform.is_device_capability_family(100) and enabled()


def use_cudnn_prefill():
    return current_platform.is_device_capability_family(100) and wanted()


def use_trtllm_ragged_deepseek_prefill():
    return current_platform.is_device_capability_family(100)
"""

DEFAULT_FILES: dict[str, str] = {
    "vllm/__init__.py": '"""vllm (test tree)."""\n',
    REGISTRY: registry_source(DEFAULT_ENTRIES),
    f"{BACKENDS}/flash_attn.py": backend_source("FlashAttentionBackend", FLASH_ATTN_BODY),
    f"{BACKENDS}/triton_attn.py": backend_source("TritonAttentionBackend", TRITON_BODY),
    f"{BACKENDS}/flashinfer.py": backend_source("FlashInferBackend", FLASHINFER_BODY),
    f"{BACKENDS}/mla/triton_mla.py": backend_source(
        "TritonMLABackend", TRITON_MLA_BODY, "MLACommonBackend"
    ),
    f"{BACKENDS}/cpu_attn.py": backend_source("CPUAttentionBackend", CPU_BODY),
    CUDA: dedent(CUDA_SOURCE),
    FA_UTILS: dedent(FA_UTILS_SOURCE),
    FLASHINFER_UTILS: dedent(FLASHINFER_UTILS_SOURCE),
    MLA_ATTENTION: dedent(MLA_ATTENTION_SOURCE),
}


def edited_demo(parent: Path, rel: str, edits: dict[str, str]) -> Path:
    """A copy of the demo tree under ``parent`` with each text of ``rel`` (found
    exactly once) replaced, in order."""
    root = parent / "tree"
    shutil.copytree(DEMO_TREE, root)
    path = root / rel
    text = path.read_text(encoding="utf-8")
    for old, new in edits.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    return root


def write_files(root: Path, files: dict[str, str | bytes | None]) -> None:
    for rel, content in files.items():
        path = root / rel
        if content is None:
            if path.exists() or path.is_symlink():
                path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def build_tree(
    root: Path, files: dict[str, str | bytes | None] | None = None, *, defaults: bool = True
) -> Path:
    """Write the default tree (unless ``defaults=False``) plus ``files`` under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    merged: dict[str, str | bytes | None] = dict(DEFAULT_FILES) if defaults else {}
    merged.update(files or {})
    write_files(root, {k: v for k, v in merged.items() if v is not None})
    write_files(root, {k: None for k, v in merged.items() if v is None})
    return root


def backend_files(
    body: str,
    *,
    name: str = "MY_ATTN",
    module: str = "vllm.v1.attention.backends.my_attn",
    class_name: str = "MyBackend",
    bases: str = "AttentionBackend",
    header: str = "",
    extra: dict[str, str | bytes | None] | None = None,
) -> dict[str, str | bytes | None]:
    """The registry with one more backend ``name``, and its module: one class whose
    body is ``body`` (``header``: module-level source before the class)."""
    entries = dict(DEFAULT_ENTRIES, **{name: f"{module}.{class_name}"})
    source = backend_source(class_name, body, bases)
    if header:
        source = source.replace("\n\n\nclass ", "\n" + dedent(header) + "\n\nclass ", 1)
    return {
        REGISTRY: registry_source(entries),
        module.replace(".", "/") + ".py": source,
        **(extra or {}),
    }


def one_backend(root: Path, body: str, **kwargs: Any) -> Path:
    """The default tree plus one registered backend (:func:`backend_files`)."""
    return build_tree(root, backend_files(body, **kwargs))


def rows(analysis: Analysis, name: str) -> list[BackendFeatures]:
    """Every row (variants included) of backend ``name``, in table order."""
    return [r for t in ("standard", "mla") for r in analysis.rows(t) if r.name == name]


def row(analysis: Analysis, name: str) -> BackendFeatures:
    """The single row of backend ``name`` (asserts it exists and has no variants)."""
    found = rows(analysis, name)
    assert len(found) == 1, f"{name}: expected one row, got {found}"
    return found[0]


def analyze_backend(root: Path, body: str, **kwargs: object) -> BackendFeatures:
    """Build a tree with one backend ``MY_ATTN`` and return its analysed row."""
    one_backend(root, body, **kwargs)  # type: ignore[arg-type]
    return row(analyze_page(root), str(kwargs.get("name", "MY_ATTN")))
