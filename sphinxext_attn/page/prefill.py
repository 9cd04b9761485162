"""MLA prefill backends: from their own registry where one exists, else from selectors.

Newer vLLM registers prefill kernels in ``backends/mla/prefill/registry.py``
and orders them in a priority function; each backend class states its dtypes,
capability and supported MLA head dimensions. Older vLLM chose the kernel in
``mla_attention.py`` through ``use_*_prefill`` functions whose capability
check tells where each runs, with FlashAttention as the fallback (before that,
the same functions were in ``backends/mla/common.py``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace

from sphinxext_attn.model.records import Location, PrefillBackend
from sphinxext_attn.page import features
from sphinxext_attn.page.flags import family_text, first_family_in, functions
from sphinxext_attn.page.priorities import guarded_lists
from sphinxext_attn.page.variants import FlashAttnFacts, compared_versions
from sphinxext_attn.source.classes import ClassFinder, ClassRef
from sphinxext_attn.source.registry import RegistryEntry, read_enum
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.vocab.paths import (
    MLA_ATTENTION_FILE,
    PREFILL_PRIORITY_FILES,
    PREFILL_REGISTRY_FILE,
    PREFILL_SELECTOR_FILES,
)

PREFILL_ENUM = "MLAPrefillBackendEnum"
DIM_FIELDS = ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")


@dataclass(frozen=True)
class _Kernel:
    registry_name: str
    selector: str
    label: str
    description: str
    enable: str
    disable: str
    notes: str


#: Prefill kernels vLLM has shipped, in the order older vLLM tried them.
KERNELS: tuple[_Kernel, ...] = (
    _Kernel(
        "TRTLLM_RAGGED",
        "use_trtllm_ragged_deepseek_prefill",
        "TRT-LLM Ragged",
        "TensorRT-LLM ragged attention",
        "Default on SM100",
        "`-ac.use_trtllm_ragged_deepseek_prefill=0`",
        "DeepSeek R1 dims only",
    ),
    _Kernel(
        "FLASHINFER",
        "use_flashinfer_prefill",
        "FlashInfer",
        "FlashInfer CUTLASS backend",
        "`-ac.disable_flashinfer_prefill=0`",
        "`-ac.disable_flashinfer_prefill=1`",
        "DeepSeek R1 dims only",
    ),
    _Kernel(
        "CUDNN",
        "use_cudnn_prefill",
        "cuDNN",
        "cuDNN-based attention",
        "`-ac.use_cudnn_prefill=1`",
        "`-ac.use_cudnn_prefill=0`",
        "",
    ),
)
DESCRIPTIONS = {k.registry_name: k.description for k in KERNELS}


def _fa_label(fa: FlashAttnFacts | None) -> str:
    versions = fa.versions if fa else [2, 3]
    return "/".join(f"FA{v}" for v in versions)


def _fa_default_note(fa: FlashAttnFacts | None) -> str:
    """``FA4 on SM100+, FA3 on SM90, FA2 otherwise`` from where each version is chosen."""
    parts = []
    for v in sorted(fa.versions if fa else [2, 3], reverse=True):
        cap = (fa.capability.get(v) if fa else {3: "9.x"}.get(v)) or ""
        digits = cap.strip("≥").split(".")[0]
        if digits.isdigit():
            parts.append(f"FA{v} on SM{digits}0{'+' if cap.startswith('≥') else ''}")
    return ", ".join([*parts, "FA2 otherwise"])


def _selector_module(tree: SourceTree) -> tuple[str, ast.Module] | None:
    """The newest home of the ``use_*_prefill`` selectors this tree has (else the
    newest of those files present: FlashAttention alone); None, with a warning,
    when there is none or the newest present does not parse."""
    selectors = {k.selector for k in KERNELS}
    present: list[tuple[str, ast.Module]] = []
    for path in PREFILL_SELECTOR_FILES:
        if not tree.exists(path):
            continue
        module = tree.parse(path)  # warns when it does not parse
        if module is None:
            return None
        if selectors & set(functions(module)):
            return path, module
        present.append((path, module))
    if present:
        return present[0]
    tree.parse(MLA_ATTENTION_FILE)  # "file not found", naming the file vLLM has now
    return None


def read_legacy(tree: SourceTree, fa: FlashAttnFacts | None) -> list[PrefillBackend]:
    """Selector-era rows: one per selector with a capability check, then FlashAttention."""
    found = _selector_module(tree)
    if found is None:
        return []
    path, module = found
    rows: list[PrefillBackend] = []
    fns = functions(module)
    for k in KERNELS:
        func = fns.get(k.selector)
        family = first_family_in(func)
        if func is None or family is None:
            continue
        # The seed's footnote names TRT-LLM Ragged as the Blackwell default.
        marker = "‡" if k.registry_name == "TRTLLM_RAGGED" else ""
        rows.append(
            PrefillBackend(
                k.label,
                k.description,
                family_text(family),
                k.enable,
                k.disable,
                k.notes,
                marker=marker,
                source=Location(path, func.lineno),
            )
        )
    rows.append(
        PrefillBackend(
            "FlashAttention",
            f"FlashAttention varlen ({_fa_label(fa)})",
            "Any",
            "Default fallback",
            "Use other backends",
            _fa_default_note(fa),
        )
    )
    return rows


# -- registry era -----------------------------------------------------------
def _dims(call: ast.AST) -> str | None:
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == "MLADimensions"
    ):
        return None
    values = {
        kw.arg: kw.value.value
        for kw in call.keywords
        if kw.arg and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, int)
    }
    if not all(f in values for f in DIM_FIELDS):
        return None
    return "(" + ", ".join(f"{f}={values[f]}" for f in DIM_FIELDS) + ")"


def _dims_in(expr: ast.AST | None, named: dict[str, str]) -> list[str]:
    """Dimensions a ``return mla_dimensions == X`` / ``in [X, Y]`` accepts."""
    if not (isinstance(expr, ast.Compare) and len(expr.ops) == 1):
        return []
    comp = expr.comparators[0]
    items = comp.elts if isinstance(comp, ast.List | ast.Tuple | ast.Set) else [comp]
    out = []
    for item in items:
        text = named.get(item.id) if isinstance(item, ast.Name) else _dims(item)
        if text:
            out.append(text)
    return out


def _method_dims(method: ast.FunctionDef, fa: FlashAttnFacts | None) -> str | None:
    named = {
        t.id: d
        for s in method.body
        if isinstance(s, ast.Assign) and (d := _dims(s.value))
        for t in s.targets
        if isinstance(t, ast.Name)
    }
    by_version: dict[int | None, list[str]] = {}
    for stmt in method.body:
        if isinstance(stmt, ast.Return):
            by_version.setdefault(None, _dims_in(stmt.value, named))
        elif isinstance(stmt, ast.If) and (versions := compared_versions(stmt.test)):
            for s in stmt.body:
                if isinstance(s, ast.Return):
                    for v in versions:
                        by_version[v] = _dims_in(s.value, named)
            for s in stmt.orelse:
                if isinstance(s, ast.Return):
                    by_version[None] = _dims_in(s.value, named)
    if not any(by_version.values()):
        return None
    if list(by_version) == [None]:
        return " or ".join(by_version[None]) + " only"
    every = [d for dims in by_version.values() for d in dims]
    order = list(dict.fromkeys(every))
    all_versions = fa.versions if fa else [2, 3]
    parts = []
    for dim in order:
        ok = [v for v in all_versions if dim in by_version.get(v, by_version.get(None, []))]
        label = "/".join(f"FA{v}" for v in ok) + ("" if ok == all_versions else " only")
        parts.append(f"{dim} ({label})")
    return " or ".join(parts)


def _notes(scope: list[ClassRef], name: str, fa: FlashAttnFacts | None) -> str:
    method = features.find_method(scope, "supports_mla_dimensions")
    if method is not None and isinstance(method.node, ast.FunctionDef):
        text = _method_dims(method.node, fa)
        if text:
            return text
    var = features.find_class_var(scope, "supported_mla_dimensions")
    if var is not None and isinstance(var.node, ast.List):
        dims = [d for e in var.node.elts if (d := _dims(e))]
        if dims:
            return " or ".join(dims) + " only"
    r1 = features.find_class_var(scope, "requires_r1_mla_dimensions")
    if r1 is not None and isinstance(r1.node, ast.Constant) and r1.node.value:
        return "DeepSeek R1 dims only"
    return _fa_default_note(fa) if name == "FLASH_ATTN" else ""


def _blackwell_order(tree: SourceTree) -> tuple[list[str], Location | None]:
    """The Blackwell prefill list that applies when no further condition holds."""
    for rel in PREFILL_PRIORITY_FILES:
        if not tree.exists(rel):
            continue
        module = tree.parse(rel)
        if module is None:
            continue
        best: tuple[int, list[str], int] | None = None
        for members, arch, extra, line in guarded_lists(module, PREFILL_ENUM):
            if arch == "sm100" and (best is None or extra <= best[0]):
                best = (extra, members, line)
        if best is not None:
            return best[1], Location(rel, best[2])
    return [], None


def _row(
    tree: SourceTree, finder: ClassFinder, entry: RegistryEntry, fa: FlashAttnFacts | None
) -> PrefillBackend | None:
    ref = finder.resolve(entry)
    if ref is None:
        return None
    scope = [ref]
    name = entry.name
    get_name = features.find_method(scope, "get_name")
    if get_name is not None:
        for n in ast.walk(get_name.node):
            if (
                isinstance(n, ast.Return)
                and isinstance(n.value, ast.Constant)
                and isinstance(n.value.value, str)
            ):
                name = n.value.value
    dtypes, _ = features.dtypes(scope)
    capability, _ = features.compute_capability(scope)
    description = DESCRIPTIONS.get(entry.name, "")
    if entry.name == "FLASH_ATTN":
        description = f"FlashAttention varlen ({_fa_label(fa)})"
    return PrefillBackend(
        name,
        description,
        capability,
        notes=_notes(scope, entry.name, fa),
        dtypes=dtypes,
        literal=True,
        source=Location(ref.path, ref.node.lineno),
    )


def read_registry_rows(
    tree: SourceTree, finder: ClassFinder, fa: FlashAttnFacts | None
) -> list[PrefillBackend]:
    entries = read_enum(tree, PREFILL_REGISTRY_FILE, PREFILL_ENUM)
    by_name = {e.name: e for e in entries}
    order, _ = _blackwell_order(tree)
    chosen = [by_name[n] for n in order if n in by_name] if order else entries
    rows = [r for e in chosen if (r := _row(tree, finder, e, fa)) is not None]
    if order and rows:
        rows[0] = replace(rows[0], marker="‡")
    return rows


def read_prefill(
    tree: SourceTree, finder: ClassFinder, fa: FlashAttnFacts | None = None, page: bool = False
) -> list[PrefillBackend]:
    """The prefill rows. ``page``: as vLLM's generator wrote them; its selector-era
    FlashAttention row had fixed words ("FA2/FA3") whatever versions the tree has."""
    if tree.exists(PREFILL_REGISTRY_FILE):
        return read_registry_rows(tree, finder, fa)
    return read_legacy(tree, None if page else fa)  # warns when no selector file is found
