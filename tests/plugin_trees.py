"""Small plugin folders written the way vllm-ascend and vllm-gaudi write their
platforms (their sources cannot be fetched by the package installer here): an entry
point that names the platform class, a ``get_attn_backend_cls`` that returns class
paths (Ascend: from dicts keyed by the layer's kind, another one on 310P devices,
a SoC fact generated at build time; Gaudi: MLA or not), and backend classes that
share the name ``CUSTOM`` and declare little. Nothing here is their code."""

from __future__ import annotations

from pathlib import Path

from treebuilder import dedent

ASCEND_BACKENDS = {
    (False, False, False): "vllm_ascend.attention.attention_v1.AscendAttentionBackend",
    (True, False, False): "vllm_ascend.attention.mla_v1.AscendMLABackend",
    (True, True, False): "vllm_ascend.attention.sfa_v1.AscendSFABackend",
    (True, False, True): "vllm_ascend.attention.mla_v1.AscendMLACompressBackend",
}
ASCEND_310P_BACKENDS = {
    (False, False, False): "vllm_ascend._310p.attention.attention_v1.AscendAttentionBackend310",
    (True, False, False): "vllm_ascend._310p.attention.mla_v1.AscendMLABackend310",
}


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text), encoding="utf-8")
    return root


def _backend(name: str, block: int, builder: str = "", mla: bool = False) -> str:
    mla_line = (
        "\n        @classmethod\n        def is_mla(cls):\n            return True\n"
        if mla
        else ""
    )
    return f"""
    class {name}Builder(AttentionMetadataBuilder):
        _cudagraph_support = AttentionCGSupport.{builder or "UNIFORM_BATCH"}


    class {name}(AttentionBackend):
        accept_output_buffer = True

        @staticmethod
        def get_name():
            return "CUSTOM"

        @staticmethod
        def get_builder_cls():
            return {name}Builder

        @staticmethod
        def get_kv_cache_shape(num_blocks, block_size, num_kv_heads, head_size):
            return (2, num_blocks, block_size, num_kv_heads, head_size)

        @staticmethod
        def get_supported_kernel_block_sizes():
            return [{block}]
    {mla_line}"""


def _module(*classes: str) -> str:
    head = """
    from vllm.v1.attention.backend import AttentionBackend


    from enum import Enum


    class AttentionCGSupport(Enum):
        NEVER = 0
        UNIFORM_BATCH = 2
        ALWAYS = 3


    class AttentionMetadataBuilder:
        _cudagraph_support = AttentionCGSupport.NEVER
    """
    return dedent(head) + "\n" + "\n".join(dedent(c) for c in classes)


def ascend_plugin(folder: Path) -> Path:
    """A vllm-ascend checkout: setup.py's entry points and ``vllm_ascend/``."""
    files = {
        "setup.py": """
            from setuptools import setup

            setup(
                name="vllm_ascend",
                entry_points={
                    "vllm.platform_plugins": ["ascend = vllm_ascend:register"],
                    "vllm.general_plugins": ["ascend_models = vllm_ascend:register_model"],
                },
            )
            """,
        "vllm_ascend/__init__.py": """
            def register():
                \"\"\"Register the NPU platform.\"\"\"
                return "vllm_ascend.platform.NPUPlatform"


            def register_model():
                pass
            """,
        "vllm_ascend/utils.py": """
            from vllm_ascend import _build_info  # generated at build time


            def get_ascend_soc_version():
                return _build_info.__soc_version__


            def is_310p():
                return get_ascend_soc_version() == "ASCEND310P3"
            """,
        "vllm_ascend/platform.py": f"""
            from vllm.platforms.interface import Platform

            from vllm_ascend.utils import is_310p


            class NPUPlatform(Platform):
                device_name: str = "npu"
                device_type: str = "npu"
                dispatch_key: str = "PrivateUse1"

                @classmethod
                def get_attn_backend_cls(
                    cls, selected_backend, attn_selector_config, num_heads=None
                ):
                    use_mla = attn_selector_config.use_mla
                    use_sparse = attn_selector_config.use_sparse
                    use_compress = getattr(attn_selector_config, "use_compress", False)
                    backend_map = {ASCEND_BACKENDS!r}
                    backend_map_310 = {ASCEND_310P_BACKENDS!r}
                    if is_310p():
                        return backend_map_310[(use_mla, use_sparse, use_compress)]
                    return backend_map[(use_mla, use_sparse, use_compress)]
            """,
        "vllm_ascend/attention/__init__.py": "",
        "vllm_ascend/attention/attention_v1.py": _module(
            _backend("AscendAttentionBackend", 128, "ALWAYS")
        ),
        "vllm_ascend/attention/mla_v1.py": _module(
            _backend("AscendMLABackend", 128, mla=True),
            _backend("AscendMLACompressBackend", 128, "NEVER", mla=True),
        ),
        "vllm_ascend/attention/sfa_v1.py": _module(_backend("AscendSFABackend", 128, mla=True)),
        "vllm_ascend/_310p/__init__.py": "",
        "vllm_ascend/_310p/attention/__init__.py": "",
        "vllm_ascend/_310p/attention/attention_v1.py": _module(
            _backend("AscendAttentionBackend310", 16, "NEVER")
        ),
        "vllm_ascend/_310p/attention/mla_v1.py": _module(
            _backend("AscendMLABackend310", 16, "NEVER", mla=True)
        ),
    }
    return _write(folder, files)


GAUDI_BACKENDS = {
    True: "vllm_gaudi.attention.backends.hpu_attn.HPUMLAAttentionBackend",
    False: "vllm_gaudi.v1.attention.backends.hpu_attn.HPUAttentionBackendV1",
}


def gaudi_plugin(folder: Path, installed: bool = False) -> Path:
    """vllm-gaudi: a checkout (pyproject.toml) or an installed distribution
    (``*.dist-info/entry_points.txt``)."""
    metadata = (
        {
            "vllm_gaudi-0.32.0.dist-info/entry_points.txt": (
                "[vllm.platform_plugins]\nhpu = vllm_gaudi:register\n"
            )
        }
        if installed
        else {
            "pyproject.toml": """
                [project]
                name = "vllm-gaudi"

                [project.entry-points."vllm.platform_plugins"]
                hpu = "vllm_gaudi:register"
                """
        }
    )
    files = {
        **metadata,
        "vllm_gaudi/__init__.py": """
            def register():
                return "vllm_gaudi.platform.HpuPlatform"
            """,
        "vllm_gaudi/platform.py": f"""
            from vllm.logger import init_logger
            from vllm.platforms.interface import Platform

            logger = init_logger(__name__)


            class HpuPlatform(Platform):
                device_name: str = "hpu"
                device_type: str = "hpu"

                @classmethod
                def get_attn_backend_cls(
                    cls, selected_backend, attn_selector_config, num_heads=None
                ):
                    if attn_selector_config.use_mla:
                        logger.info("Using HPUAttentionMLA backend.")
                        return {GAUDI_BACKENDS[True]!r}
                    logger.info("Using HPUAttentionV1 backend.")
                    return {GAUDI_BACKENDS[False]!r}
            """,
        "vllm_gaudi/attention/__init__.py": "",
        "vllm_gaudi/attention/backends/__init__.py": "",
        "vllm_gaudi/attention/backends/hpu_attn.py": _module(
            _backend("HPUMLAAttentionBackend", 128, mla=True)
        ),
        "vllm_gaudi/v1/__init__.py": "",
        "vllm_gaudi/v1/attention/__init__.py": "",
        "vllm_gaudi/v1/attention/backends/__init__.py": "",
        "vllm_gaudi/v1/attention/backends/hpu_attn.py": _module(
            _backend("HPUAttentionBackendV1", 128)
        ),
    }
    return _write(folder, files)
