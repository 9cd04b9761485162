"""Whether a plugin's classes can be read, said as the fault model says it: a link out
of the plugin's folder, a missing module, a class path outside both trees, a syntax
error are warnings naming the file, and the rest is built."""

from __future__ import annotations

from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.source.registry import RegistryEntry
from sphinxext_attn.source.syntax_check import syntax_problems


def readable_class(interp: Interpreter, entry: RegistryEntry) -> bool:
    """Whether a plugin's class ``entry`` names can be read; if not, a warning naming
    the file (a link out of the plugin's folder, a missing module, a path outside
    both trees). vLLM's own classes are checked where vLLM's tables are built."""
    tree = interp.tree
    module, _, name = entry.class_path.rpartition(".")
    where = entry.location
    if tree.owns(module) and module.split(".", 1)[0] not in tree.plugin_roots:
        return True
    candidates = tree.module_file_candidates(module)
    if not tree.owns(module) or not candidates:
        tree.warn(
            f"{entry.name}: class path {entry.class_path!r} is outside the vllm package "
            "and its plugins",
            where.path,
            where.line,
            "outside",
        )
        return False
    # the package's __init__.py is looked at only where no module file is found; the
    # warning names the candidate that leads out (a package folder linked out names
    # its __init__.py, not the module file that is not there)
    outside = candidates[0] if tree.is_outside(candidates[0]) else None
    if outside is None and tree.module_file(module) is None and tree.is_outside(candidates[1]):
        outside = candidates[1]
    if outside is not None:
        tree.warn(
            f"{entry.name}: class path {entry.class_path!r} resolves outside the plugin's folder",
            outside,
            0,
            "outside",
        )
        return False
    path = tree.module_file(module)
    if path is None:
        tree.warn(
            f"{entry.name}: module file {candidates[0]} not found",
            where.path,
            where.line,
            "missing",
        )
        return False
    return True


def check_plugin_modules(interp: Interpreter) -> None:
    """Syntax-check the plugin modules the evaluator read piece by piece: a file
    broken outside the pieces asked for still gets its warning (file and line)."""
    tree = interp.tree
    for scope in list(interp.modules.values()):
        rel = getattr(scope, "path", "")
        if not rel or rel.split("/", 1)[0] not in tree.plugin_roots:
            continue
        text = tree.text(rel)
        for message, line in syntax_problems(rel, text) if text else ():
            tree.warn(message, rel, line, subtype="syntax")
