"""Demo platform detection: each plugin names its platform class when its hardware is there."""


def cuda_platform_plugin() -> str | None:
    import pynvml

    return "vllm.platforms.cuda.CudaPlatform" if pynvml.nvmlDeviceGetCount() else None


def rocm_platform_plugin() -> str | None:
    import amdsmi

    return "vllm.platforms.rocm.RocmPlatform" if amdsmi.amdsmi_get_processor_handles() else None


def xpu_platform_plugin() -> str | None:
    import torch

    return "vllm.platforms.xpu.XPUPlatform" if torch.xpu.is_available() else None


def cpu_platform_plugin() -> str | None:
    return "vllm.platforms.cpu.CpuPlatform"


builtin_platform_plugins = {
    "cuda": cuda_platform_plugin,
    "rocm": rocm_platform_plugin,
    "xpu": xpu_platform_plugin,
    "cpu": cpu_platform_plugin,
}
