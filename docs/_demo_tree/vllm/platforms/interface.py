"""Demo platform interface: the device capability record and the platform base."""

import enum
from typing import NamedTuple


class PlatformEnum(enum.Enum):
    CUDA = enum.auto()
    ROCM = enum.auto()
    XPU = enum.auto()
    CPU = enum.auto()


class DeviceCapability(NamedTuple):
    major: int
    minor: int

    def _key(self) -> tuple[int, int]:
        return (self.major, self.minor)

    def __lt__(self, other: "DeviceCapability") -> bool:
        return self._key() < other._key()

    def __le__(self, other: "DeviceCapability") -> bool:
        return self._key() <= other._key()

    def __gt__(self, other: "DeviceCapability") -> bool:
        return self._key() > other._key()

    def __ge__(self, other: "DeviceCapability") -> bool:
        return self._key() >= other._key()

    def to_int(self) -> int:
        """8.6 -> 86, 10.3 -> 103."""
        return self.major * 10 + self.minor


class Platform:
    _enum: PlatformEnum

    @classmethod
    def get_device_capability(cls, device_id: int = 0) -> DeviceCapability | None:
        return None

    @classmethod
    def is_device_capability_family(cls, capability: int, device_id: int = 0) -> bool:
        """Same major version: `is_device_capability_family(100)` holds on 10.0 and 10.3."""
        current = cls.get_device_capability(device_id)
        return current is not None and current.to_int() // 10 == capability // 10

    def is_cuda(self) -> bool:
        return self._enum == PlatformEnum.CUDA

    def is_rocm(self) -> bool:
        return self._enum == PlatformEnum.ROCM

    def is_xpu(self) -> bool:
        return self._enum == PlatformEnum.XPU

    def is_cpu(self) -> bool:
        return self._enum == PlatformEnum.CPU
