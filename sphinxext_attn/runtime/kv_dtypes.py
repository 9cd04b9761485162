"""The KV Dtypes column: the list a class declares, and where vLLM's selection differs.

vLLM names a backend's KV cache dtypes by its ``supported_kv_cache_dtypes``
class attribute (the interface's check reads it, ROCm's "Supported
kv_cache_dtype values" hint prints it, and the recorded truth is that list).
The selection asks ``supports_kv_cache_dtype()`` instead, which a class may
override: a composite backend built by a function accepts what both of its
parts accept, a subclass inherits a check gated by the GPU. So the cell is the
declared list, and where the method accepts a different set the cell carries
a note saying so (the selection, the selector and ``select`` follow the method).
A class whose list cannot be read, or is empty (the check then takes any
dtype), shows what the method accepts, as before.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from sphinxext_attn.model.records import Location
from sphinxext_attn.pyeval import STEPS_PER_CELL, Interpreter, PyClass, Raised, Unknown, class_mro

ATTRIBUTE = "supported_kv_cache_dtypes"
METHOD = "supports_kv_cache_dtype"
NODE = ast.Pass()


@dataclass(frozen=True)
class Declared:
    """The class's declared KV cache dtypes and the line that assigns them."""

    dtypes: tuple[str, ...]
    where: Location | None


def declared_dtypes(interp: Interpreter, cls: PyClass) -> Declared | None:
    """``cls.supported_kv_cache_dtypes`` when it is a non-empty list of strings
    (the same on every GPU); None otherwise."""
    try:
        where = (cls.path, cls.node.lineno)
        with interp.question(capability=None, steps=STEPS_PER_CELL, where=where):
            value = interp.getattr(cls, ATTRIBUTE, NODE, cls.path)
    except (Unknown, Raised):
        return None
    if not isinstance(value, list | tuple) or not value:
        return None
    if not all(isinstance(v, str) for v in value):
        return None
    return Declared(tuple(dict.fromkeys(value)), _assigned_at(interp, cls))


def _assigned_at(interp: Interpreter, cls: PyClass) -> Location | None:
    """Where the nearest class of the resolution order assigns the attribute."""
    try:
        mro = [k for k in class_mro(cls, interp) if isinstance(k, PyClass)]
    except (Unknown, Raised, RecursionError):
        return None
    for klass in mro:
        for stmt in getattr(klass.node, "body", []):
            if isinstance(stmt, ast.Assign):
                targets = stmt.targets
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                targets = [stmt.target]
            else:
                continue
            if any(isinstance(t, ast.Name) and t.id == ATTRIBUTE for t in targets):
                return Location(klass.path, stmt.lineno)
    return None


def ordered(declared: tuple[str, ...], release: list[str]) -> list[str]:
    """The declared dtypes in the order of the release's ``CacheDType`` literal
    (as the method's answers are listed), any others after them."""
    return [d for d in release if d in declared] + [d for d in declared if d not in release]


def selection_note(
    declared: tuple[str, ...],
    accepted: list[str] | None,
    *,
    unknown: str = "",
    raised: str = "",
    by_gpu: bool = False,
    assumed: list[str] | None = None,
) -> str:
    """Why the selection may differ from the cell: what the method accepts instead,
    or that it could not be evaluated; "" when both say the same."""
    head = f"{METHOD}(), which vLLM's selection asks,"
    if unknown:
        return f"{head} is not evaluated: {unknown}"
    if raised:
        return f"{head} raises {raised}"
    if accepted is None:
        return ""
    extra = [d for d in accepted if d not in declared]
    missing = [d for d in declared if d not in accepted]
    if not extra and not missing:
        return ""
    if extra and missing:
        what = f"accepts {', '.join(accepted) or 'none'} instead"
    elif extra:
        what = f"also accepts {', '.join(extra)}"
    else:
        what = f"does not accept {', '.join(missing)}"
    terms = ["on some GPUs"] if by_gpu and extra else []
    terms += [f"assuming {', '.join(assumed)}"] if assumed else []
    return f"{head} {what}" + (f" ({'; '.join(terms)})" if terms else "")
