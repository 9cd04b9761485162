"""Variant rows: one registered backend shown as several rows (FA2/FA3, Native/TRTLLM).

FlashAttention picks its version in ``fa_utils.py``; FlashInfer switches to
TRTLLM kernels on Blackwell in ``vllm/utils/flashinfer.py``. The facts that
differ per variant are read from those functions.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace

from sphinxext_attn.core.flags import family_text, find_function, first_family_in
from sphinxext_attn.core.models import BackendFeatures, Footnote, Location
from sphinxext_attn.core.source import SourceTree
from sphinxext_attn.render import prose

FA_UTILS_FILE = "vllm/v1/attention/backends/fa_utils.py"
FLASHINFER_UTILS_FILE = "vllm/utils/flashinfer.py"
FP8_KV_DTYPES = ("fp8", "fp8_e4m3", "fp8_e5m2")


@dataclass(frozen=True)
class FlashAttnFacts:
    fa3_capability: str | None
    fa3_fp8: bool
    fa3_sinks: bool
    location: Location


@dataclass(frozen=True)
class FlashInferFacts:
    trtllm_capability: str
    location: Location


def _compares_fa_version(func: ast.FunctionDef | None) -> bool:
    """The function tests ``get_flash_attn_version() <op> N``."""
    if func is None:
        return False
    return any(
        isinstance(n, ast.Compare)
        and isinstance(n.left, ast.Call)
        and isinstance(n.left.func, ast.Name)
        and n.left.func.id == "get_flash_attn_version"
        for n in ast.walk(func)
    )


def _fa3_major(func: ast.FunctionDef | None) -> str | None:
    """``3 if (cap.major == 9 and ...) else 2`` -> ``9.x``."""
    if func is None:
        return None
    for n in ast.walk(func):
        if isinstance(n, ast.IfExp) and isinstance(n.test, ast.BoolOp):
            for val in n.test.values:
                if (
                    isinstance(val, ast.Compare)
                    and isinstance(val.left, ast.Attribute)
                    and val.left.attr == "major"
                    and val.comparators
                    and isinstance(val.comparators[0], ast.Constant)
                ):
                    return f"{val.comparators[0].value}.x"
    return None


def flash_attn_facts(tree: SourceTree) -> FlashAttnFacts | None:
    if not tree.exists(FA_UTILS_FILE):
        return None
    module = tree.parse(FA_UTILS_FILE)
    if module is None:
        return None
    version_fn = find_function(module, "get_flash_attn_version")
    return FlashAttnFacts(
        fa3_capability=_fa3_major(version_fn),
        fa3_fp8=_compares_fa_version(find_function(module, "flash_attn_supports_fp8")),
        fa3_sinks=_compares_fa_version(find_function(module, "flash_attn_supports_sinks")),
        location=Location(FA_UTILS_FILE, version_fn.lineno if version_fn else 0),
    )


def flashinfer_facts(tree: SourceTree) -> FlashInferFacts | None:
    if not tree.exists(FLASHINFER_UTILS_FILE):
        return None
    module = tree.parse(FLASHINFER_UTILS_FILE)
    if module is None:
        return None
    func = find_function(module, "supports_trtllm_attention")
    family = first_family_in(func)
    if func is None or family is None:
        return None
    return FlashInferFacts(family_text(family), Location(FLASHINFER_UTILS_FILE, func.lineno))


def _with_fp8(kv: tuple[str, ...]) -> tuple[str, ...]:
    return kv + tuple(d for d in FP8_KV_DTYPES if d not in kv)


def _min_major(capability: str) -> str:
    match = re.search(r"\d+", capability)
    return match.group(0) if match else "7"


def expand_variants(
    rows: list[BackendFeatures], fa: FlashAttnFacts | None, fi: FlashInferFacts | None
) -> tuple[list[BackendFeatures], list[Footnote]]:
    """Split FLASH_ATTN and FLASHINFER into their variant rows; footnotes in table order."""
    out: list[BackendFeatures] = []
    for row in rows:
        if fa is not None and row.name == "FLASH_ATTN":
            out.append(replace(row, version="FA2*", variant_order=0, supports_sink=False))
            src = dict(row.sources, **{"Compute Cap.": fa.location, "Sink": fa.location})
            fa3 = replace(
                row,
                version="FA3*",
                variant_order=1,
                supports_sink=fa.fa3_sinks,
                compute_capability=fa.fa3_capability or row.compute_capability,
                kv_cache_dtypes=_with_fp8(row.kv_cache_dtypes) if fa.fa3_fp8 else row.kv_cache_dtypes,
                sources=src,
            )
            out.append(fa3)
        elif fi is not None and row.name == "FLASHINFER":
            native_cap = f"{_min_major(row.compute_capability)}.x-9.x"
            out.append(
                replace(row, version="Native†", supports_sink=False, compute_capability=native_cap)
            )
            src = dict(row.sources, **{"Compute Cap.": fi.location, "Sink": fi.location})
            out.append(
                replace(
                    row,
                    version="TRTLLM†",
                    variant_order=1,
                    supports_sink=True,
                    compute_capability=fi.trtllm_capability,
                    sources=src,
                )
            )
        else:
            out.append(row)
    notes: list[Footnote] = []
    if fi is not None:
        notes.append(Footnote("†", prose.FOOTNOTE_FLASHINFER))
    if fa is not None:
        notes.append(Footnote("*", prose.FOOTNOTE_FLASH_ATTN))
    return out, notes
