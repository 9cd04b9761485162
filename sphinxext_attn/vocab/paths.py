"""Where vLLM keeps the files and modules the analysis reads, relative to the tree root.

A file that moved between releases is a tuple, newest first. The pre-commit
filter of the command line (:data:`RELEVANT_PATTERNS`) is derived from these.
"""

from __future__ import annotations


def module_file(dotted: str) -> str:
    """``vllm.platforms.cuda`` -> ``vllm/platforms/cuda.py``."""
    return dotted.replace(".", "/") + ".py"


def folder(path: str) -> str:
    return path.rpartition("/")[0]


# -- platforms ----------------------------------------------------------------
PLATFORM_PACKAGE = "vllm.platforms"
PLATFORM_INIT_FILE = f"{PLATFORM_PACKAGE.replace('.', '/')}/__init__.py"
CUDA_PLATFORM_MODULE = f"{PLATFORM_PACKAGE}.cuda"
CUDA_PLATFORM_FILE = module_file(CUDA_PLATFORM_MODULE)
#: ``DeviceCapability`` and the platform interface (also the prefill lists of 0.13)
PLATFORM_INTERFACE_MODULE = f"{PLATFORM_PACKAGE}.interface"
PLATFORM_INTERFACE_FILE = module_file(PLATFORM_INTERFACE_MODULE)

# -- backends, their base class and registry ----------------------------------
BACKENDS_DIR = "vllm/v1/attention/backends"
#: the backend interface (``AttentionBackend``)
BACKEND_BASE_FILE = "vllm/v1/attention/backend.py"
#: the backends folder of vLLM 0.13 and before
OLD_BACKENDS_DIR = "vllm/attention/backends"
REGISTRY_FILE = f"{BACKENDS_DIR}/registry.py"
REGISTRY_FILES = (REGISTRY_FILE, f"{OLD_BACKENDS_DIR}/registry.py")
#: the selector (``AttentionSelectorConfig``), newest first
SELECTOR_MODULES = ("vllm.v1.attention.selector", "vllm.attention.selector")
#: the environment variables vLLM reads (``envs.VLLM_BATCH_INVARIANT``)
ENVS_MODULE = "vllm.envs"
#: the engine config package (``VllmConfig``, whose fields ``--option`` sets)
CONFIG_MODULE = "vllm.config"
#: where the ``CacheDType`` literal lives, newest first
CACHE_DTYPE_MODULES = ("vllm.config.cache", "vllm.config")

# -- FlashAttention and FlashInfer ---------------------------------------------
FA_UTILS_MODULES = ("vllm.v1.attention.backends.fa_utils", "vllm.attention.utils.fa_utils")
FA_UTILS_FILES = tuple(module_file(m) for m in FA_UTILS_MODULES)
FA_UTILS_FILE = FA_UTILS_FILES[0]
#: the FlashAttention build's interface; releases before 0.17 do not ship its source,
#: so the machine answers for it as a full build does (knowledge.machine)
FA_INTERFACE_MODULE = "vllm.vllm_flash_attn.flash_attn_interface"
FLASHINFER_UTILS_FILE = "vllm/utils/flashinfer.py"

# -- MLA prefill ------------------------------------------------------------------
MLA_ATTENTION_FILE = "vllm/model_executor/layers/attention/mla_attention.py"
#: where the ``use_*_prefill`` selectors have lived, newest first
PREFILL_SELECTOR_FILES = (MLA_ATTENTION_FILE, f"{BACKENDS_DIR}/mla/common.py")
PREFILL_REGISTRY_FILE = f"{BACKENDS_DIR}/mla/prefill/registry.py"
#: where the prefill priority lists have lived, newest last
PREFILL_PRIORITY_FILES = (f"{BACKENDS_DIR}/mla/prefill/selector.py", PLATFORM_INTERFACE_FILE)

# -- the release and its own page ----------------------------------------------------
#: where a build writes the release's version (an installed distribution has it)
VERSION_FILE = "vllm/_version.py"
#: vLLM's page generator (the pre-commit hook, later a mkdocs hook)
GENERATORS = (
    "tools/pre_commit/generate_attention_backend_docs.py",
    "docs/mkdocs/gen_files/generate_attention_backends.py",
)
#: the page vLLM's generator writes
PAGE_FILE = "docs/design/attention_backends.md"

#: Files whose change can change the page (the pre-commit filter): the backends
#: (any depth), their interface, the folder of 0.13's registry and base class,
#: the FlashAttention and FlashInfer helpers, the MLA layers, the CUDA priority
#: lists, and vLLM's generator and page (which columns the release has).
RELEVANT_PATTERNS: tuple[str, ...] = (
    f"{BACKENDS_DIR}/*.py",
    f"{BACKENDS_DIR}/**/*.py",
    BACKEND_BASE_FILE,
    f"{OLD_BACKENDS_DIR}/*.py",
    *(f for f in FA_UTILS_FILES if not f.startswith(f"{BACKENDS_DIR}/")),
    f"{folder(MLA_ATTENTION_FILE)}/*.py",
    CUDA_PLATFORM_FILE,
    FLASHINFER_UTILS_FILE,
    *GENERATORS,
    PAGE_FILE,
)

# -- a model's layers (sphinxext_attn.models) ------------------------------------------
#: the model registry and the package of model files
MODEL_REGISTRY_FILE = "vllm/model_executor/models/registry.py"
MODELS_PACKAGE = "vllm.model_executor.models"
#: the config convertor (head size, MLA, layers and heads of a config)
CONFIG_CONVERTOR_MODULE = "vllm.transformers_utils.model_arch_config_convertor"
#: ``_resolve_auto_dtype`` and the engine arguments' cache config (its sliding window)
MODEL_CONFIG_FILE = "vllm/config/model.py"
ENGINE_ARGS_FILE = "vllm/engine/arg_utils.py"
#: the attention layer classes a model builds, and the plain layer's file
ATTENTION_LAYERS_PACKAGE = "vllm.model_executor.layers.attention"
ATTENTION_LAYER_FILE = "vllm/model_executor/layers/attention/attention.py"
