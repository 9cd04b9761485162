"""What one platform's selection looks like, for a page: its lists or rules, and the
backends it can reach with the GPUs each accepts.

Computed only for a platform a page shows (a CUDA-only page never asks), once per
tree and environment in a process.
"""

from __future__ import annotations

from sphinxext_attn.knowledge.devices import platform_class
from sphinxext_attn.knowledge.machine import Machine, capability_class
from sphinxext_attn.model.environment import Environment
from sphinxext_attn.model.platform import PlatformSelection
from sphinxext_attn.model.selection import Config
from sphinxext_attn.pyeval import MISSING, NODE, Interpreter, Raised, Unknown
from sphinxext_attn.selection.decision import Selector
from sphinxext_attn.selection.platform_lists import (
    machine_selector,
    named_archs,
    platform_priorities,
)
from sphinxext_attn.selection.platform_rules import read_rules
from sphinxext_attn.selection.requested import registry_enum
from sphinxext_attn.source.tree import SourceTree


def evaluate_selection(tree: SourceTree, environment: Environment) -> PlatformSelection:
    """The platform's lists (and the GPUs each backend accepts) or its rules."""
    out = PlatformSelection(environment.platform, arch=environment.arch)
    interp = Interpreter(tree, Machine(environment))
    try:
        with interp.guarded():
            cls = platform_class(interp, environment.platform)
            out.source = cls.path
            if interp.class_attr(cls, "get_valid_backends")[0] is not MISSING:
                out.lists = platform_priorities(tree, environment)
                out.gpus = _accepted_gpus(tree, environment, out.backends())
            else:
                out.rules, out.source = read_rules(interp, environment.platform)
    except (Unknown, Raised) as exc:
        out.error = str(exc)
    return out


def _accepted_gpus(
    tree: SourceTree, environment: Environment, backends: list[str]
) -> dict[str, list[str]]:
    """Per backend, the named GPUs whose capability its ``supports_compute_capability``
    accepts, asked on a machine with that GPU (a check may read the arch too)."""
    archs = [environment.arch] if environment.arch else named_archs(tree, environment)
    out: dict[str, list[str]] = {b: [] for b in backends}
    for arch in archs:
        env = Environment(
            environment.env, environment.options, environment.assume, environment.platform, arch
        )
        selector = machine_selector(tree, env)  # the machine the lists were explored on
        for backend in backends:
            if _accepts(selector, backend):
                out[backend].append(arch)
    return {b: (["any"] if a == archs else a) for b, a in out.items()}


def _accepts(selector: Selector, backend: str) -> bool:

    interp = selector.interp
    try:
        with interp.question(steps=None) as q:
            gpu = selector.gpu(Config(capability="0.0"))
            q.capability = gpu
            enum = registry_enum(interp)
            member = interp.getattr(enum, backend, NODE, "")
            cls = interp.call(interp.getattr(member, "get_class", NODE, ""), [], {}, NODE, "")
            capability = interp.call(capability_class(interp), list(gpu), {}, NODE, "")
            check = interp.getattr(cls, "supports_compute_capability", NODE, "")
            return bool(interp.truth(interp.call(check, [capability], {}, NODE, ""), NODE, ""))
    except (Unknown, Raised):
        return False
