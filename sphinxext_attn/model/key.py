"""What one analysis answers: the key every front end asks :func:`analysis.analyze`
with and every cache keeps analyses by (never a string parsed back)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sphinxext_attn.model.environment import REFERENCE, Environment
from sphinxext_attn.model.plugin import Plugins

#: the two readings of a tree
PROFILES = ("runtime", "vllm-page")
#: how much of another platform's page an analysis holds: nothing evaluated (a select
#: directive asks its own questions), its lists or rules, or those and its feature rows
PLATFORM_PARTS = ("bare", "lists", "features")
PLATFORM_PROFILE_PREFIX = "platform:"


@dataclass(frozen=True)
class AnalysisKey:
    """A tree, the reading of it, and everything assumed outside it.

    ``part`` is empty for the CUDA page (the tables of either profile) and one of
    :data:`PLATFORM_PARTS` for another platform's part of a page. ``provenance``
    False skips finding the line behind each evaluated cell, ``extras`` False the
    capabilities outside the release's page columns (a page that shows neither).
    ``plugins``: the platform plugins read with the tree (none: vLLM's files alone).
    """

    root: str
    profile: str = "runtime"
    environment: Environment = field(default=REFERENCE, compare=False, hash=False)
    part: str = ""
    provenance: bool = True
    extras: bool = True
    plugins: Plugins = ()
    #: the environment as text, so that keys compare and hash by value
    environment_key: str = field(default="", init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "environment_key", self.environment.key())

    @property
    def analysis_profile(self) -> str:
        """What :attr:`Analysis.profile` says for this key (``platform:lists``, ...)."""
        return PLATFORM_PROFILE_PREFIX + self.part if self.part else self.profile

    @property
    def is_platform_part(self) -> bool:
        return bool(self.part)

    def with_part(self, part: str) -> AnalysisKey:
        return replace(self, part=part)
