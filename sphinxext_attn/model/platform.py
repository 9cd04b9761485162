"""How one platform selects, as plain records for pages: its priority lists (ROCm)
or its rules (XPU, CPU), and the GPUs each backend accepts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sphinxext_attn.model.environment import DEFAULT_ROCM_ARCH
from sphinxext_attn.model.records import PriorityList

if TYPE_CHECKING:
    from sphinxext_attn.model.records import Analysis


# -- the rules as written, for the page ---------------------------------------------
@dataclass(frozen=True)
class Rule:
    """One outcome of ``get_attn_backend_cls`` with no backend requested: the
    conditions that lead to it (in the code's words), the backend or what it raises."""

    conditions: tuple[str, ...]
    outcome: str
    line: int
    #: the class path the rule returns where it names one itself (a plugin's)
    class_path: str = ""

    @property
    def shown(self) -> str:
        """The outcome for a table: with its class where a plugin's class gives it
        (vllm-ascend's and vllm-gaudi's classes all say ``CUSTOM``)."""
        if self.class_path:
            return f"{self.outcome} ({self.class_path.rpartition('.')[2]})"
        return self.outcome


TITLES = {"cuda": "CUDA", "rocm": "ROCm", "xpu": "XPU", "cpu": "CPU"}


@dataclass
class PlatformSelection:
    platform: str
    #: ROCm: every list get_valid_backends walks, per GPU group (see platform_lists)
    lists: list[PriorityList] = field(default_factory=list)
    #: XPU, CPU: get_attn_backend_cls's automatic rules, in order
    rules: list[Rule] = field(default_factory=list)
    source: str = ""
    #: backend -> the GPUs (arch names) whose capability it accepts; "any" for all
    gpus: dict[str, list[str]] = field(default_factory=dict)
    error: str = ""

    #: the GPU the feature cells were asked on ("" : the platform's default)
    arch: str = ""

    @property
    def title(self) -> str:
        return TITLES.get(self.platform, self.platform.upper())

    @property
    def machine(self) -> str:
        """The machine the feature cells are asked on, in words."""
        if self.platform != "rocm":
            article = "an" if self.title[0] in "AEIOUX" else "a"
            return f"{article} {self.title} machine"
        if self.arch:
            return f"a ROCm machine with a {self.arch}"
        return f"a ROCm machine with a {DEFAULT_ROCM_ARCH} (MI300X, MI325X)"

    def backends(self) -> list[str]:
        names = [b for p in self.lists for b in p.backends]
        names += [r.outcome for r in self.rules if not r.outcome.startswith("raises ")]
        return list(dict.fromkeys(names))


def gpu_header(analysis: Analysis) -> str:
    """What the capability column is called on the platform's tables."""
    selection = getattr(analysis, "platform", None)
    return "GPUs" if selection is not None and selection.gpus else "Compute Cap."
