"""One rule per feature column, read from a backend class.

Each rule looks a member up in ``scope`` (the backend class itself: vLLM's
own generator reads only the class body, and its pages are the reference),
turns the AST it finds into the cell's facts, and returns where it read
them for provenance.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sphinxext_attn.model.records import Location
from sphinxext_attn.source.classes import ClassRef
from sphinxext_attn.vocab.names import ATTN_TYPE_NAMES, DTYPE_LABELS


@dataclass(frozen=True)
class Found:
    """A member found on some class of the resolution order."""

    node: ast.AST
    owner: ClassRef

    @property
    def location(self) -> Location:
        return Location(self.owner.path, getattr(self.node, "lineno", 0))


def _body_members(ref: ClassRef) -> Iterator[ast.stmt]:
    yield from ref.node.body


def find_method(scope: list[ClassRef], name: str) -> Found | None:
    """The first definition of method ``name`` along ``scope``."""
    for ref in scope:
        for item in _body_members(ref):
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name == name:
                return Found(item, ref)
    return None


def find_class_var(scope: list[ClassRef], name: str) -> Found | None:
    """The first assignment ``name = ...`` or ``name: T = ...`` along ``scope`` (its value)."""
    for ref in scope:
        for item in _body_members(ref):
            if isinstance(item, ast.AnnAssign) and item.value is not None:
                if isinstance(item.target, ast.Name) and item.target.id == name:
                    return Found(item.value, ref)
            elif isinstance(item, ast.Assign):
                for target in item.targets:
                    if isinstance(target, ast.Name) and target.id == name:
                        return Found(item.value, ref)
    return None


def _literal_items(node: ast.AST) -> list[str] | None:
    """Names or constants of a list/tuple literal: ``[torch.float16, "auto"]``."""
    if not isinstance(node, ast.List | ast.Tuple):
        return None
    items: list[str] = []
    for elt in node.elts:
        if isinstance(elt, ast.Attribute):
            items.append(elt.attr)
        elif isinstance(elt, ast.Constant):
            items.append(str(elt.value))
    return items


def returns_true(method: Found | None) -> bool:
    """True when the method has a ``return True`` anywhere (the seed's flag rule)."""
    if method is None:
        return False
    return any(
        isinstance(n, ast.Return) and isinstance(n.value, ast.Constant) and n.value.value is True
        for n in ast.walk(method.node)
    )


def dtypes(scope: list[ClassRef]) -> tuple[tuple[str, ...], Location | None]:
    found = find_class_var(scope, "supported_dtypes")
    items = _literal_items(found.node) if found else None
    if found is None or items is None:
        return ("fp16", "bf16"), None
    return tuple(DTYPE_LABELS.get(d, d) for d in items), found.location


def _aliases(node: ast.AST, lines: list[str]) -> set[str]:
    """Items of a literal list whose line says ``# alias for <another item>``."""
    found: set[str] = set()
    if not isinstance(node, ast.List | ast.Tuple):
        return found
    names = {e.value for e in node.elts if isinstance(e, ast.Constant)}
    for elt in node.elts:
        if not (isinstance(elt, ast.Constant) and 0 < elt.lineno <= len(lines)):
            continue
        _, hash_, comment = lines[elt.lineno - 1].partition("#")
        words = comment.split()
        if hash_ and words[:2] == ["alias", "for"] and len(words) > 2 and words[2] in names:
            found.add(str(elt.value))
    return found


def kv_cache_dtypes(
    scope: list[ClassRef], lines: Callable[[str], list[str]] | None = None
) -> tuple[tuple[str, ...], Location | None]:
    """The listed KV cache dtypes; an entry marked as an alias of another is shown once."""
    found = find_class_var(scope, "supported_kv_cache_dtypes")
    items = _literal_items(found.node) if found else None
    if found and items:
        aliases = _aliases(found.node, lines(found.owner.path)) if lines else set()
        return tuple(i for i in items if i not in aliases), found.location
    method = find_method(scope, "supports_kv_cache_dtype")
    if method is not None:
        for n in ast.walk(method.node):
            if (
                isinstance(n, ast.Compare)
                and len(n.ops) == 1
                and isinstance(n.ops[0], ast.In)
                and isinstance(n.comparators[0], ast.List)
            ):
                names = [
                    e.value
                    for e in n.comparators[0].elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                ]
                if names:
                    return tuple(names), Location(method.owner.path, n.lineno)
    return ("auto",), None


def _multiple_of(elt: ast.expr) -> str | None:
    if (
        isinstance(elt, ast.Call)
        and isinstance(elt.func, ast.Name)
        and elt.func.id == "MultipleOf"
        and elt.args
        and isinstance(elt.args[0], ast.Constant)
    ):
        return f"%{elt.args[0].value!s}"
    return None


def returned_list(
    scope: list[ClassRef], method_name: str, multiple_of: bool = False
) -> tuple[tuple[str, ...], Location | None]:
    """Items of the first non-empty ``return [...]`` of a method (breadth-first)."""
    method = find_method(scope, method_name)
    if method is None:
        return (), None
    for node in ast.walk(method.node):
        if not (isinstance(node, ast.Return) and isinstance(node.value, ast.List)):
            continue
        sizes: list[str] = []
        for elt in node.value.elts:
            if isinstance(elt, ast.Constant):
                sizes.append(str(elt.value))
            elif multiple_of and (text := _multiple_of(elt)):
                sizes.append(text)
        if sizes:
            return tuple(sizes), Location(method.owner.path, node.lineno)
    return (), None


def block_sizes(scope: list[ClassRef]) -> tuple[tuple[str, ...], Location | None]:
    return returned_list(scope, "get_supported_kernel_block_sizes", multiple_of=True)


def head_sizes(scope: list[ClassRef]) -> tuple[tuple[str, ...], Location | None]:
    return returned_list(scope, "get_supported_head_sizes")


def _device_capability(node: ast.expr) -> tuple[int, int] | None:
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "DeviceCapability"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, int)
    ):
        second = node.args[1] if len(node.args) > 1 else None
        has_minor = isinstance(second, ast.Constant) and isinstance(second.value, int)
        minor = second.value if has_minor else 0  # type: ignore[union-attr]
        return node.args[0].value, minor
    return None


def compute_capability(scope: list[ClassRef]) -> tuple[str, Location | None]:
    """``supports_compute_capability`` as ``≥8.0``, ``9.x``, ``9.x-10.x`` or ``Any``."""
    method = find_method(scope, "supports_compute_capability")
    if method is None:
        return "Any", None
    low: tuple[int, int] | None = None
    high: tuple[int, int] | None = None
    majors: list[int] = []
    #: the comparisons that decided the value, for provenance: (kind, line)
    lines: dict[str, int] = {}
    for n in ast.walk(method.node):
        if not isinstance(n, ast.Compare):
            continue
        for op, comp in zip(n.ops, n.comparators, strict=False):
            cap = _device_capability(comp)
            if cap is None:
                continue
            if isinstance(op, ast.GtE):
                low = cap
                lines["low"] = n.lineno
            elif isinstance(op, ast.LtE):
                high = cap
        if (
            isinstance(n.left, ast.Attribute)
            and n.left.attr == "major"
            and len(n.ops) == 1
            and len(n.comparators) == 1
        ):
            comp = n.comparators[0]
            if isinstance(n.ops[0], ast.Eq) and isinstance(comp, ast.Constant):
                if isinstance(comp.value, int):
                    majors.append(comp.value)
                    lines.setdefault("major", n.lineno)
            elif isinstance(n.ops[0], ast.In) and isinstance(comp, ast.List):
                majors.extend(
                    e.value
                    for e in comp.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, int)
                )
                lines.setdefault("major", n.lineno)
    where = method.location
    line = lines.get("major" if majors else "low")
    if line and (majors or low):
        where = Location(method.owner.path, line)
    if majors:
        majors = sorted(set(majors))
        if len(majors) == 1:
            return f"{majors[0]}.x", where
        if majors == list(range(majors[0], majors[-1] + 1)):
            return f"{majors[0]}.x-{majors[-1]}.x", where
        return ", ".join(f"{m}.x" for m in majors), where
    if low:
        if high:
            return f"{low[0]}.x-{high[0]}.x", where
        return f"≥{low[0]}.{low[1]}", where
    return "Any", where


def attention_types(scope: list[ClassRef]) -> tuple[str, Location | None]:
    """``supports_attn_type``: ``attn_type in (AttentionType.X, ...)``; three or more is All."""
    method = find_method(scope, "supports_attn_type")
    if method is None:
        return "Decoder", None
    types: set[str] = set()
    compare_line = 0
    for n in ast.walk(method.node):
        if (
            isinstance(n, ast.Compare)
            and len(n.ops) == 1
            and isinstance(n.ops[0], ast.In)
            and isinstance(n.comparators[0], ast.Tuple | ast.Set)
        ):
            for elt in n.comparators[0].elts:
                if isinstance(elt, ast.Attribute) and elt.attr in ATTN_TYPE_NAMES:
                    types.add(ATTN_TYPE_NAMES[elt.attr])
                    compare_line = compare_line or n.lineno
    if not types:
        return "Decoder", method.location
    where = Location(method.owner.path, compare_line) if compare_line else method.location
    every = set(ATTN_TYPE_NAMES.values())
    return ("All" if types >= every else ", ".join(sorted(types))), where


def flag(scope: list[ClassRef], method_name: str) -> tuple[bool, Location | None]:
    """A capability method that returns True somewhere; located at that ``return``
    (or the method's first ``return`` when it never says True)."""
    method = find_method(scope, method_name)
    if method is None:
        return False, None
    value = returns_true(method)
    returns = [n for n in ast.walk(method.node) if isinstance(n, ast.Return)]
    if value:
        returns = [
            n for n in returns if isinstance(n.value, ast.Constant) and n.value.value is True
        ]
    line = returns[0].lineno if returns else method.location.line
    return value, Location(method.owner.path, line)
