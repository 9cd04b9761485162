"""Variant rows: one registered backend shown as several rows.

FlashAttention picks a version at run time (``get_flash_attn_version`` in
``fa_utils.py``): each version it can assign becomes a row (FA2*, FA3*, FA4*)
with the capability that guards the assignment, and with sinks and fp8 KV
caches where the gating functions compare the version. FlashInfer switches
to TRTLLM kernels (``supports_trtllm_attention`` in ``vllm/utils/flashinfer.py``):
an exact-capability check is the XQA decode path, a capability family is the
TRTLLM(-gen) path, everything else is native FlashInfer.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace

from sphinxext_attn.model.records import BackendFeatures, Footnote, Location
from sphinxext_attn.page.features import find_method
from sphinxext_attn.page.flags import calls, family_text, functions
from sphinxext_attn.page.footnotes import flash_attn_footnote, flashinfer_footnote
from sphinxext_attn.source.classes import ClassRef
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.vocab.names import FP8_KV_DTYPES
from sphinxext_attn.vocab.paths import FA_UTILS_FILE, FA_UTILS_FILES, FLASHINFER_UTILS_FILE

#: KV formats only the TRTLLM-gen kernels read (exact names).
TRTLLM_ONLY_KV = frozenset({"nvfp4"})
FA_VERSIONS = (2, 3, 4)


@dataclass
class FlashAttnFacts:
    versions: list[int]
    capability: dict[int, str] = field(default_factory=dict)
    sinks: set[int] = field(default_factory=set)
    fp8: set[int] = field(default_factory=set)
    #: True when fp8 support lists the KV dtypes itself (only advertised ones are kept)
    fp8_advertised: bool = False
    location: Location = Location(FA_UTILS_FILE)
    #: provenance: version -> where it is chosen; "sinks"/"fp8" -> the gating function
    where: dict[int | str, Location] = field(default_factory=dict)


@dataclass(frozen=True)
class FlashInferFacts:
    trtllm_capability: str | None
    xqa_capability: str | None
    location: Location


def _is_version_expr(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "fa_version") or (
        isinstance(node, ast.Call) and calls(node, "get_flash_attn_version")
    )


def compared_versions(func: ast.AST | None) -> set[int]:
    """Versions a function tests for: ``v == 3``, ``v in (3, 4)``, ``v >= 3``."""
    found: set[int] = set()
    if func is None:
        return found
    for n in ast.walk(func):
        if not (isinstance(n, ast.Compare) and len(n.ops) == 1 and _is_version_expr(n.left)):
            continue
        op, comp = n.ops[0], n.comparators[0]
        if isinstance(comp, ast.Constant) and isinstance(comp.value, int):
            if isinstance(op, ast.Eq):
                found.add(comp.value)
            elif isinstance(op, ast.GtE):
                found.update(v for v in FA_VERSIONS if v >= comp.value)
        elif isinstance(op, ast.In) and isinstance(comp, ast.Tuple | ast.List | ast.Set):
            found.update(
                e.value
                for e in comp.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, int)
            )
    return found


def _major_tests(test: ast.expr) -> list[tuple[ast.cmpop, int]]:
    """``x.major <op> N`` terms of a condition (through ``and``)."""
    terms = test.values if isinstance(test, ast.BoolOp) else [test]
    out: list[tuple[ast.cmpop, int]] = []
    for t in terms:
        if (
            isinstance(t, ast.Compare)
            and isinstance(t.left, ast.Attribute)
            and t.left.attr == "major"
            and isinstance(t.comparators[0], ast.Constant)
            and isinstance(t.comparators[0].value, int)
        ):
            out.append((t.ops[0], t.comparators[0].value))
    return out


def _assigned_versions(node: ast.AST) -> set[int]:
    """Version constants a statement or expression can produce: ``3``, ``4 if ok else 2``."""
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int)
        and node.value in FA_VERSIONS
    ):
        return {node.value}
    if isinstance(node, ast.IfExp):
        return _assigned_versions(node.body) | _assigned_versions(node.orelse)
    return set()


def _version_guards(
    func: ast.FunctionDef,
) -> tuple[list[int], dict[int, list[tuple[ast.cmpop, int]]], dict[int, int]]:
    """Every version the function can choose, the capability tests guarding each,
    and the line that first chooses it (for provenance)."""
    versions: set[int] = set()
    guards: dict[int, list[tuple[ast.cmpop, int]]] = {}
    lines: dict[int, int] = {}

    def note(value: ast.AST, tests: list[tuple[ast.cmpop, int]]) -> None:
        for v in _assigned_versions(value.body if isinstance(value, ast.IfExp) else value):
            lines.setdefault(v, getattr(value, "lineno", 0))
        if isinstance(value, ast.IfExp):
            for v in _assigned_versions(value.body):
                guards.setdefault(v, []).extend(_major_tests(value.test))
            versions.update(_assigned_versions(value.orelse))
        for v in _assigned_versions(value):
            versions.add(v)
            guards.setdefault(v, []).extend(tests)

    def visit(body: list[ast.stmt], tests: list[tuple[ast.cmpop, int]]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.If):
                visit(stmt.body, tests + _major_tests(stmt.test))
                visit(stmt.orelse, tests)
            elif isinstance(stmt, ast.Try):
                visit(stmt.body, tests)
            elif (
                isinstance(stmt, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id in returned for t in stmt.targets)
                or isinstance(stmt, ast.Return)
                and stmt.value is not None
            ):
                note(stmt.value, tests)  # type: ignore[arg-type]

    returned = {"fa_version"} | {
        n.value.id
        for n in ast.walk(func)
        if isinstance(n, ast.Return) and isinstance(n.value, ast.Name)
    }
    visit(func.body, [])
    return sorted(versions), guards, lines


def _capability_text(tests: list[tuple[ast.cmpop, int]]) -> str | None:
    """``>= 10`` anywhere reads as ``≥10.0``; else the first ``== 9`` as ``9.x``."""
    for op, major in tests:
        if isinstance(op, ast.GtE):
            return f"≥{major}.0"
    for op, major in tests:
        if isinstance(op, ast.Eq):
            return f"{major}.x"
    return None


def _backend_fp8_method(backend: ClassRef | None) -> ast.AST | None:
    """The backend's own ``supports_kv_cache_dtype`` when it gates fp8 on the version."""
    found = find_method([backend], "supports_kv_cache_dtype") if backend else None
    return found.node if found and compared_versions(found.node) else None


def flash_attn_facts(
    tree: SourceTree, backend: ClassRef | None = None, required: bool = False
) -> FlashAttnFacts | None:
    """FlashAttention's versions; ``required`` (FLASH_ATTN is registered) makes a
    missing ``fa_utils.py`` a warning (naming its newest home)."""
    path = tree.first_present(FA_UTILS_FILES)
    if path is None and not required:
        return None
    path = path or FA_UTILS_FILE
    module = tree.parse(path)
    if module is None:
        return None
    fns = functions(module)
    version_fn = fns.get("get_flash_attn_version")
    if version_fn is None:
        return None
    versions, guards, lines = _version_guards(version_fn)
    if 2 not in versions:
        versions = sorted({2, *versions})
    facts = FlashAttnFacts(
        versions=[v for v in versions if v in FA_VERSIONS],
        location=Location(path, version_fn.lineno),
    )
    for v in facts.versions:
        cap = _capability_text(guards.get(v, [])) if v != 2 else None
        if cap:
            facts.capability[v] = cap
        if lines.get(v):
            facts.where[v] = Location(path, lines[v])
    sinks_fn = fns.get("flash_attn_supports_sinks")
    facts.sinks = compared_versions(sinks_fn)
    if sinks_fn is not None:
        facts.where["sinks"] = Location(path, sinks_fn.lineno)
    kv_fn = fns.get("flash_attn_supports_kv_cache_dtype")
    if kv_fn is not None:
        facts.fp8, facts.fp8_advertised = compared_versions(kv_fn), True
        facts.where["fp8"] = Location(path, kv_fn.lineno)
    elif (fp8_fn := fns.get("flash_attn_supports_fp8")) is not None:
        facts.fp8 = compared_versions(fp8_fn)
        facts.where["fp8"] = Location(path, fp8_fn.lineno)
    else:
        facts.fp8 = compared_versions(_backend_fp8_method(backend))
    return facts


def flashinfer_facts(tree: SourceTree, required: bool = False) -> FlashInferFacts | None:
    """FlashInfer's kernel paths; ``required`` (FLASHINFER is registered) makes a
    missing ``vllm/utils/flashinfer.py`` a warning."""
    if not required and not tree.exists(FLASHINFER_UTILS_FILE):
        return None
    module = tree.parse(FLASHINFER_UTILS_FILE)
    func = functions(module).get("supports_trtllm_attention") if module else None
    if func is None:
        return None
    family = exact = None
    for n in ast.walk(func):  # breadth-first: the shallowest check is the main one
        if not (isinstance(n, ast.Call) and n.args and isinstance(n.args[0], ast.Constant)):
            continue
        value = n.args[0].value
        if not isinstance(value, int):
            continue
        if family is None and calls(n, "is_device_capability_family"):
            family = family_text(value)
        elif exact is None and calls(n, "is_device_capability"):
            exact = f"{value // 10}.{value % 10}"
    if family is None and exact is None:
        return None
    return FlashInferFacts(family, exact, Location(FLASHINFER_UTILS_FILE, func.lineno))


def _fp8_kv(kv: tuple[str, ...], supported: bool, advertised: bool) -> tuple[str, ...]:
    if advertised:
        plain = tuple(d for d in kv if d not in FP8_KV_DTYPES)
        return plain + tuple(d for d in kv if d in FP8_KV_DTYPES) if supported else plain
    if supported:
        return kv + tuple(d for d in FP8_KV_DTYPES if d not in kv)
    return kv


def _min_major(capability: str) -> str:
    match = re.search(r"\d+", capability)
    return match.group(0) if match else "7"


def _flash_attn_rows(row: BackendFeatures, fa: FlashAttnFacts) -> list[BackendFeatures]:
    rows = []
    for order, v in enumerate(fa.versions):
        src = dict(row.sources)
        if v != 2:
            src["Compute Cap."] = fa.where.get(v, fa.location)
        if "sinks" in fa.where:
            src["Sink"] = fa.where["sinks"]
        if v in fa.fp8 and "fp8" in fa.where:
            src["KV Dtypes"] = fa.where["fp8"]
        rows.append(
            replace(
                row,
                version=f"FA{v}*",
                variant_order=order,
                supports_sink=v in fa.sinks,
                compute_capability=fa.capability.get(v, row.compute_capability),
                kv_cache_dtypes=_fp8_kv(row.kv_cache_dtypes, v in fa.fp8, fa.fp8_advertised),
                sources=src,
            )
        )
    return rows


def _flashinfer_rows(row: BackendFeatures, fi: FlashInferFacts) -> list[BackendFeatures]:
    src = dict(row.sources, **{"Compute Cap.": fi.location, "Sink": fi.location})
    no_trtllm_kv = tuple(d for d in row.kv_cache_dtypes if d not in TRTLLM_ONLY_KV)
    rows = [
        replace(
            row,
            version="Native†",
            supports_sink=False,
            compute_capability=f"{_min_major(row.compute_capability)}.x-9.x",
            kv_cache_dtypes=no_trtllm_kv,
        )
    ]
    if fi.xqa_capability:
        rows.append(
            replace(
                row,
                version="XQA†",
                variant_order=1,
                supports_sink=False,
                supports_non_causal=False,
                compute_capability=fi.xqa_capability,
                kv_cache_dtypes=no_trtllm_kv,
                sources=src,
            )
        )
    if fi.trtllm_capability:
        rows.append(
            replace(
                row,
                version="trtllm-gen†" if fi.xqa_capability else "TRTLLM†",
                variant_order=2,
                supports_sink=True,
                compute_capability=fi.trtllm_capability,
                sources=src,
            )
        )
    return rows


def expand_variants(
    rows: list[BackendFeatures], fa: FlashAttnFacts | None, fi: FlashInferFacts | None
) -> tuple[list[BackendFeatures], list[Footnote]]:
    """Split FLASH_ATTN and FLASHINFER into their variant rows; footnotes in table order."""
    out: list[BackendFeatures] = []
    for row in rows:
        if fa is not None and row.name == "FLASH_ATTN":
            out.extend(_flash_attn_rows(row, fa))
        elif fi is not None and row.name == "FLASHINFER":
            out.extend(_flashinfer_rows(row, fi))
        else:
            out.append(row)
    notes: list[Footnote] = []
    if fi is not None:
        notes.append(Footnote("†", flashinfer_footnote(fi.xqa_capability is not None)))
    if fa is not None:
        notes.append(Footnote("*", flash_attn_footnote(fa.versions, fa.capability)))
    return out, notes
