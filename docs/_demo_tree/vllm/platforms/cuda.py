"""Demo CUDA platform: the order in which backends are tried, and the choice."""

from typing import TYPE_CHECKING, NamedTuple

import torch

from vllm.platforms.interface import DeviceCapability, Platform, PlatformEnum
from vllm.v1.attention.backends.registry import AttentionBackendEnum

if TYPE_CHECKING:
    from vllm.v1.attention.backend import AttentionBackend
    from vllm.v1.attention.selector import AttentionSelectorConfig


def _get_backend_priorities(
    use_mla: bool,
    device_capability: DeviceCapability,
    num_heads: int | None = None,
    use_mm_prefix: bool = False,
) -> list[AttentionBackendEnum]:
    if use_mla:
        if device_capability.major == 10:
            backends = [
                AttentionBackendEnum.FLASHMLA,
                AttentionBackendEnum.TRITON_MLA,
                AttentionBackendEnum.FLASHMLA_SPARSE,
            ]
            if num_heads is not None and num_heads <= 16:
                # FlashMLA pads a small head count up to 64: Triton is quicker there
                backends = [
                    AttentionBackendEnum.TRITON_MLA,
                    AttentionBackendEnum.FLASHMLA,
                    AttentionBackendEnum.FLASHMLA_SPARSE,
                ]
            return backends
        else:
            return [
                AttentionBackendEnum.FLASHMLA,
                AttentionBackendEnum.TRITON_MLA,
            ]
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
                # FlashInfer has no full attention over a multimodal prefix
                *([] if use_mm_prefix else [AttentionBackendEnum.FLASHINFER]),
                AttentionBackendEnum.TRITON_ATTN,
            ]


class _BackendCandidate(NamedTuple):
    backend_class: "type[AttentionBackend]"
    backend: AttentionBackendEnum
    priority: int


class CudaPlatform(Platform):
    _enum = PlatformEnum.CUDA

    @classmethod
    def get_device_capability(cls, device_id: int = 0) -> DeviceCapability:
        major, minor = torch.cuda.get_device_capability(device_id)
        return DeviceCapability(major, minor)

    @classmethod
    def get_valid_backends(
        cls,
        device_capability: DeviceCapability,
        attn_selector_config: "AttentionSelectorConfig",
        num_heads: int | None = None,
    ) -> tuple[list[_BackendCandidate], dict[AttentionBackendEnum, tuple[int, list[str]]]]:
        """Each backend of the priority list, valid or with the reasons it is not."""
        valid: list[_BackendCandidate] = []
        invalid: dict[AttentionBackendEnum, tuple[int, list[str]]] = {}
        backends = _get_backend_priorities(
            use_mla=attn_selector_config.use_mla,
            device_capability=device_capability,
            num_heads=num_heads,
            use_mm_prefix=attn_selector_config.use_mm_prefix,
        )
        for priority, backend in enumerate(backends):
            try:
                backend_class = backend.get_class()
                reasons = backend_class.validate_configuration(
                    device_capability=device_capability,
                    **attn_selector_config._asdict(),
                )
            except ImportError as exc:
                reasons = [f"ImportError: {exc}"]
            if reasons:
                invalid[backend] = (priority, reasons)
            else:
                valid.append(_BackendCandidate(backend_class, backend, priority))
        return valid, invalid

    @classmethod
    def get_attn_backend_cls(
        cls, attn_selector_config: "AttentionSelectorConfig", num_heads: int | None = None
    ) -> str:
        """The first valid backend of the list; none valid is an error with every reason."""
        capability = cls.get_device_capability()
        valid, invalid = cls.get_valid_backends(capability, attn_selector_config, num_heads)
        if not valid:
            reasons = {backend.name: why for backend, (_, why) in invalid.items()}
            raise ValueError(f"No valid attention backend for {attn_selector_config}: {reasons}")
        return min(valid, key=lambda candidate: candidate.priority).backend.get_path()
