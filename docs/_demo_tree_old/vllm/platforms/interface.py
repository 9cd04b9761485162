"""Demo device capability record."""

from typing import NamedTuple


class DeviceCapability(NamedTuple):
    major: int
    minor: int
