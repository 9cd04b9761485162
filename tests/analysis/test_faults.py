"""The fault model (issue 6): every fault gives a diagnostic naming the file
(and line where there is one), never an exception, and every table that can
still be built is built. First on small invented trees, then injected into a
copy of vLLM 0.33.0 through the command line."""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

import pytest
import vllm_trees
from treebuilder import (
    BACKENDS,
    CUDA,
    DEFAULT_ENTRIES,
    FA_UTILS,
    FLASHINFER_UTILS,
    MLA_ATTENTION,
    REGISTRY,
    analyze_page,
    backend_source,
    build_tree,
    registry_source,
    rows,
)

from sphinxext_attn.cli.main import main
from sphinxext_attn.model.records import Analysis, Diagnostic

FLASH = f"{BACKENDS}/flash_attn.py"
TRITON = f"{BACKENDS}/triton_attn.py"
TRITON_MLA = f"{BACKENDS}/mla/triton_mla.py"
#: The registry line of TRITON_ATTN in ``registry_source`` (members start on line 5).
TRITON_LINE = 5 + list(DEFAULT_ENTRIES).index("TRITON_ATTN")
ALL_ROWS = {"FLASH_ATTN", "TRITON_ATTN", "FLASHINFER", "TRITON_MLA", "CPU_ATTN"}


def diags(analysis: Analysis, path: str) -> list[Diagnostic]:
    return [d for d in analysis.diagnostics if d.location and d.location.path == path]


def assert_diag(analysis: Analysis, path: str, line: int | None = None) -> Diagnostic:
    found = diags(analysis, path)
    assert found, f"no diagnostic for {path}: {[str(d) for d in analysis.diagnostics]}"
    if line is not None:
        assert line in [d.location.line for d in found], [str(d) for d in found]
    return found[0]


def names(analysis: Analysis) -> set[str]:
    return {r.name for r in analysis.backends}


def assert_priorities(analysis: Analysis) -> None:
    assert {(p.category, p.arch) for p in analysis.priorities} == {
        ("standard", "sm100"),
        ("standard", "default"),
        ("mla", "sm100"),
        ("mla", "default"),
    }


def fault(tmp_path: Path, files: dict) -> Analysis:
    return analyze_page(build_tree(tmp_path / "tree", files))


# -- missing, broken or undecodable files --------------------------------------
def test_missing_registry(tmp_path):
    analysis = fault(tmp_path, {REGISTRY: None})
    assert_diag(analysis, REGISTRY)
    assert analysis.backends == []
    assert_priorities(analysis)
    assert analysis.mla_prefill[-1].name == "FlashAttention"


def test_moved_backend_file(tmp_path):
    tree = build_tree(tmp_path / "tree")
    (tree / TRITON).rename(tree / BACKENDS / "triton_attn_moved.py")
    analysis = analyze_page(tree)
    d = assert_diag(analysis, REGISTRY, TRITON_LINE)  # the registry line naming the class
    assert "triton_attn" in d.message
    assert names(analysis) == ALL_ROWS - {"TRITON_ATTN"}
    assert_priorities(analysis)


@pytest.mark.parametrize(
    ("path", "lost"),
    [(FLASH, {"FLASH_ATTN"}), (TRITON_MLA, {"TRITON_MLA"}), (REGISTRY, ALL_ROWS)],
)
def test_syntax_error(tmp_path, path, lost):
    """A syntax error inside the class the registry names (or in the registry)."""
    text = build_tree(tmp_path / "tree").joinpath(path).read_text()
    broken = text.splitlines()
    at = next(i for i, ln in enumerate(broken) if ln.startswith("class ")) + 1
    broken.insert(at, "    def broken(:")
    analysis = fault(tmp_path, {path: "\n".join(broken) + "\n"})
    d = assert_diag(analysis, path, at + 1)
    assert "syntax" in d.message.lower()
    assert names(analysis) == ALL_ROWS - lost
    assert_priorities(analysis)


def test_syntax_error_outside_backend_class(tmp_path):
    """Even when the backend's class itself reads fine, the broken file is reported."""
    text = build_tree(tmp_path / "tree").joinpath(FLASH).read_text()
    analysis = fault(tmp_path, {FLASH: "def helper(:\n    pass\n" + text})
    assert_diag(analysis, FLASH, 1)


def test_missing_platform_file(tmp_path):
    analysis = fault(tmp_path, {CUDA: None})
    assert_diag(analysis, CUDA)
    assert analysis.priorities == []
    assert names(analysis) == ALL_ROWS


@pytest.mark.parametrize("path", [FA_UTILS, FLASHINFER_UTILS, MLA_ATTENTION])
def test_missing_helper_file_warns(tmp_path, path):
    analysis = fault(tmp_path, {path: None})
    assert names(analysis) == ALL_ROWS
    assert_priorities(analysis)
    assert_diag(analysis, path)


def test_syntax_error_in_platform_file(tmp_path):
    analysis = fault(tmp_path, {CUDA: "def _get_backend_priorities(use_mla:\n"})
    assert_diag(analysis, CUDA, 1)
    assert analysis.priorities == []
    assert names(analysis) == ALL_ROWS


def test_undecodable_bytes(tmp_path):
    source = backend_source("TritonAttentionBackend").encode() + b"\nx = '\xff\xfe\xc3'\n"
    analysis = fault(tmp_path, {TRITON: source})
    d = assert_diag(analysis, TRITON)
    assert d.location.line in (0, source.count(b"\n"))  # the bad line, when known
    assert names(analysis) == ALL_ROWS - {"TRITON_ATTN"}
    assert_priorities(analysis)


def test_encoding_cookie_is_honoured(tmp_path):
    body = "supported_dtypes = [torch.float32]\n"
    source = b"# -*- coding: latin-1 -*-\n# caf\xe9 cr\xe8me\n" + backend_source(
        "TritonAttentionBackend", body
    ).encode("latin-1")
    analysis = fault(tmp_path, {TRITON: source})
    assert diags(analysis, TRITON) == []
    assert [r.cell("Dtypes") for r in rows(analysis, "TRITON_ATTN")] == ["fp32"]


def test_bad_encoding_cookie(tmp_path):
    cookie = b"# -*- coding: no-such-codec -*-\n"
    source = cookie + backend_source("TritonAttentionBackend").encode()
    analysis = fault(tmp_path, {TRITON: source})
    assert_diag(analysis, TRITON)
    assert names(analysis) == ALL_ROWS - {"TRITON_ATTN"}


def test_missing_class(tmp_path):
    analysis = fault(tmp_path, {TRITON: backend_source("SomethingElse")})
    d = assert_diag(analysis, TRITON)
    assert "TritonAttentionBackend" in d.message
    assert names(analysis) == ALL_ROWS - {"TRITON_ATTN"}


# -- the registry ----------------------------------------------------------------
@pytest.mark.parametrize(
    "source",
    [
        registry_source(DEFAULT_ENTRIES, enum_name="BackendEnum"),
        registry_source({}),
        registry_source({"TORCH_SDPA": "", "CUSTOM": ""}),
        "",
    ],
    ids=["renamed", "empty", "no-backends", "empty-file"],
)
def test_renamed_or_empty_registry(tmp_path, source):
    analysis = fault(tmp_path, {REGISTRY: source})
    assert_diag(analysis, REGISTRY)
    assert analysis.backends == []
    assert_priorities(analysis)


@pytest.mark.parametrize(
    "class_path",
    [
        ".vllm.v1.attention.backends.triton_attn.TritonAttentionBackend",
        "vllm..v1.attention.backends.triton_attn.TritonAttentionBackend",
        "...",
        "..etc.passwd.X",
        "vllm.v1.attention.backends.triton_attn.",
        "/etc/passwd.X",
        "vllm.v1.attention.backends.tri ton.X",
    ],
)
def test_bad_class_paths(tmp_path, class_path):
    entries = dict(DEFAULT_ENTRIES, TRITON_ATTN=class_path)
    analysis = fault(tmp_path, {REGISTRY: registry_source(entries)})
    assert_diag(analysis, REGISTRY, TRITON_LINE)
    assert names(analysis) == ALL_ROWS - {"TRITON_ATTN"}
    assert_priorities(analysis)


# -- symlinks ---------------------------------------------------------------------
def test_backend_file_symlink_out_of_tree(tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text(backend_source("TritonAttentionBackend"))
    tree = build_tree(tmp_path / "tree", {TRITON: None})
    (tree / TRITON).symlink_to(outside)
    analysis = analyze_page(tree)
    assert analysis.diagnostics, "a symlink out of the tree must be reported"
    assert any("triton_attn" in str(d) for d in analysis.diagnostics)
    assert names(analysis) == ALL_ROWS - {"TRITON_ATTN"}
    assert str(outside) not in analysis.files


def test_directory_symlink_out_of_tree(tmp_path):
    outside = tmp_path / "elsewhere"
    build_tree(outside, {}, defaults=False)
    (outside / "triton_mla.py").write_text(backend_source("TritonMLABackend"))
    tree = build_tree(tmp_path / "tree")
    shutil.rmtree(tree / BACKENDS / "mla")
    (tree / BACKENDS / "mla").symlink_to(outside, target_is_directory=True)
    analysis = analyze_page(tree)
    assert any("mla" in str(d) for d in analysis.diagnostics)
    assert names(analysis) == ALL_ROWS - {"TRITON_MLA"}
    assert_priorities(analysis)


def test_symlink_inside_tree_is_fine(tmp_path):
    tree = build_tree(tmp_path / "tree")
    real = tree / BACKENDS / "real_triton.py"
    (tree / TRITON).rename(real)
    (tree / TRITON).symlink_to(real)
    assert names(analyze_page(tree)) == ALL_ROWS


def test_safe_path_follows_links_at_every_level(tmp_path):
    """Folders are resolved once per tree; a link in a linked folder, or the last
    part of a path, is still followed and judged by where it really ends."""
    from sphinxext_attn.source.tree import SourceTree

    tree = tmp_path / "tree"
    (tree / "a").mkdir(parents=True)
    (tree / "a" / "in.py").write_text("X = 1\n")
    (tree / "b").symlink_to(tree / "a", target_is_directory=True)  # a link inside
    (tmp_path / "out.py").write_text("X = 2\n")
    (tree / "a" / "out.py").symlink_to(tmp_path / "out.py")  # leaves the tree
    (tree / "c").symlink_to(tmp_path, target_is_directory=True)  # leaves the tree
    source = SourceTree(tree)
    assert source.safe_path("a/in.py") == (tree / "a" / "in.py").resolve()
    assert source.safe_path("b/in.py") == (tree / "a" / "in.py").resolve()
    assert source.safe_path("b/out.py") is None
    assert source.safe_path("a/out.py") is None
    assert source.safe_path("c/out.py") is None
    # out and back in: judged by where it ends, as os.path.realpath judges it
    assert source.safe_path("c/tree/a/in.py") == (tree / "a" / "in.py").resolve()
    assert source.safe_path("a") == (tree / "a").resolve()
    assert source.safe_path("c") is None


# -- pathological nesting and size -----------------------------------------------------
NESTING = {
    "huge-list": "X = [" + "1, " * 100_000 + "]\n",
    "parens": "X = " + "(" * 10_000 + "1" + ")" * 10_000 + "\n",
    "lists": "X = " + "[" * 10_000 + "]" * 10_000 + "\n",
    "binops": "X = " + " + ".join(["1"] * 100_000) + "\n",
    "unary": "X = " + "-" * 100_000 + "1\n",
    "attrs": "X = a" + ".b" * 100_000 + "\n",
    "calls": "X = f" + "()" * 50_000 + "\n",
    # deep but still parseable: the rules' own walks must cope
    "binops-2k": "X = " + " + ".join(["1"] * 2_000) + "\n",
    "parens-150": "X = " + "(" * 150 + "1" + ")" * 150 + "\n",
    "lists-150": "X = " + "[" * 150 + "]" * 150 + "\n",
    "compare-5k": "X = a" + " >= b" * 5_000 + "\n",
    "boolop-20k": "X = " + " and ".join(["capability.major == 9"] * 20_000) + "\n",
}


#: Kinds whose TRITON_ATTN row survives with the expression everywhere, and the row's
#: (Dtypes, Compute Cap., Head Sizes) as the vllm-page profile reads them today (the
#: literal list as it stands; "Any" where a method's answer cannot be read); the other
#: kinds drop the row with a diagnostic naming the file.
SURVIVING = {
    "binops-2k": ("fp16, bf16", "Any", "Any"),
    "boolop-20k": ("fp16, bf16", "9.x", "Any"),
    "compare-5k": ("fp16, bf16", "Any", "Any"),
    "huge-list": (", ".join(["1"] * 100_000), "Any", "Any"),
    "lists-150": ("", "Any", "Any"),
    "parens-150": ("fp16, bf16", "Any", "1"),
}


@pytest.mark.parametrize("place", ["everywhere", "module-only"])
@pytest.mark.parametrize("kind", sorted(NESTING))
def test_pathological_expressions(tmp_path, kind, place):
    """At module level, and inside the methods the rules walk (or only at module
    level, beside a clean backend class)."""
    expr = NESTING[kind].removeprefix("X = ").rstrip("\n")
    body = (
        f"supported_dtypes = {expr}\n"
        f"@classmethod\ndef supports_compute_capability(cls, capability):\n    return {expr}\n"
        f"@classmethod\ndef get_supported_head_sizes(cls):\n    return [{expr}]\n"
    )
    if place == "module-only":
        body = "supported_dtypes = [torch.float32]\n"
    source = NESTING[kind] + backend_source("TritonAttentionBackend", body)
    analysis = fault(tmp_path, {TRITON: source})
    assert isinstance(analysis, Analysis)
    assert names(analysis) >= ALL_ROWS - {"TRITON_ATTN"}
    if place == "module-only":
        assert [r.cell("Dtypes") for r in rows(analysis, "TRITON_ATTN")] == ["fp32"]
    elif kind in SURVIVING:
        (row,) = rows(analysis, "TRITON_ATTN")
        cells = (row.cell("Dtypes"), row.cell("Compute Cap."), row.cell("Head Sizes"))
        assert cells == SURVIVING[kind]
    else:
        assert "TRITON_ATTN" not in names(analysis)
        assert_diag(analysis, TRITON)
    assert_priorities(analysis)


def test_huge_file(tmp_path):
    source = backend_source("TritonAttentionBackend") + "#" * (8 * 1024 * 1024) + "\n"
    analysis = fault(tmp_path, {TRITON: source})
    assert_diag(analysis, TRITON)
    assert names(analysis) == ALL_ROWS - {"TRITON_ATTN"}


def test_empty_platform_file(tmp_path):
    analysis = fault(tmp_path, {CUDA: ""})
    assert_diag(analysis, CUDA)
    assert analysis.priorities == []
    assert names(analysis) == ALL_ROWS


def test_no_vllm_package(tmp_path):
    analysis = analyze_page(tmp_path)
    assert analysis.backends == [] and analysis.diagnostics


# -- the same faults in a copy of vLLM 0.33.0, through the command line --------------
R = "vllm/v1/attention/backends"


def in_class(text: str, name: str, line: str) -> str:
    """``line`` as the first statement of top-level ``class name``."""
    start = text.index(f"\nclass {name}(") + 1
    end = text.index(":\n", start) + 2
    return text[:end] + "    " + line + "\n" + text[end:]


REAL_FAULTS: dict[str, tuple[str, object]] = {
    "syntax": (f"{R}/flash_attn.py", lambda t: in_class(t, "FlashAttentionBackend", "def f(:")),
    "syntax-elsewhere": (f"{R}/flash_attn.py", lambda t: "def f(:\n" + t),
    "undecodable": (f"{R}/triton_attn.py", lambda t: t.encode() + b"\n'\xff\xfe'\n"),
    "missing-file": (f"{R}/flashinfer.py", None),
    "missing-triton": (f"{R}/triton_attn.py", None),
    "missing-class": (f"{R}/triton_attn.py", lambda t: t.replace("TritonAttentionBackend", "X")),
    "outside-path": (f"{R}/registry.py", lambda t: t.replace('"vllm.v1.', '"..vllm.v1.', 1)),
    "empty-segment": (f"{R}/registry.py", lambda t: t.replace('"vllm.v1.', '"vllm..v1.', 1)),
    "symlink": (f"{R}/flash_attn.py", "symlink"),
    "nesting": (
        f"{R}/triton_attn.py",
        lambda t: in_class(t, "TritonAttentionBackend", "X = " + "(" * 5000 + ")" * 5000),
    ),
    "deep-binop": (
        f"{R}/flash_attn.py",
        lambda t: in_class(t, "FlashAttentionBackend", "X = " + "+".join("1" * 100_000)),
    ),
    "renamed-registry-enum": (
        f"{R}/registry.py",
        lambda t: t.replace("AttentionBackendEnum(", "E("),
    ),
    "empty-platform": ("vllm/platforms/cuda.py", lambda t: ""),
    "missing-registry": (f"{R}/registry.py", None),
}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    """One full copy of vLLM 0.33.0 per module; tests hard-link it (faults replace files)."""
    src = vllm_trees.tree("0.33.0")
    dest = tmp_path_factory.mktemp("pristine") / "vllm-0.33.0"
    shutil.copytree(src / "vllm", dest / "vllm")
    return dest


@pytest.mark.realtree
@pytest.mark.parametrize("kind", sorted(REAL_FAULTS))
def test_fault_in_real_tree(pristine, tmp_path, capsys, kind):
    root = tmp_path / "vllm-0.33.0"
    shutil.copytree(pristine, root, copy_function=os.link)
    rel, change = REAL_FAULTS[kind]
    target = root / rel
    text = target.read_text(encoding="utf-8")
    target.unlink()  # never write through a hard link into the pristine copy
    if change == "symlink":
        outside = tmp_path / "outside.py"
        outside.write_text(text)
        target.symlink_to(outside)
    elif change is not None:
        new = change(text)
        assert new != text
        (target.write_bytes if isinstance(new, bytes) else target.write_text)(new)
    out = tmp_path / "page.md"
    assert main(["--profile", "vllm-page", "--root", str(root), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    # the file itself, or (for a class path or a symlink leaving the tree) the registry
    # line whose class path names it
    dotted = rel.removesuffix(".py").replace("/", ".")
    # a backend the priority lists reach is a warning even when its file or class is
    # gone (NO_ATTENTION, which no list reaches, stays a note)
    lines = [ln for ln in err.splitlines() if ln.startswith("warning:")]
    if "registry" not in kind:
        assert any(ln.startswith("note:") and "NO_ATTENTION" in ln for ln in err.splitlines())
    assert any(rel in ln or (f"{R}/registry.py:" in ln and dotted in ln) for ln in lines), err
    if kind in ("outside-path", "empty-segment"):
        assert any(f"{R}/registry.py:" in ln for ln in lines), err
    page = out.read_text(encoding="utf-8")
    registry_lost = kind in ("missing-registry", "renamed-registry-enum")
    if kind != "empty-platform":
        assert "| 1 | `FLASH" in page  # priority lists
    if not registry_lost:
        standard = page.split("## Standard Attention (MHA, MQA, GQA) Backends")[1]
        assert "| `TRITON_ATTN` |" in standard or "| `FLASH_ATTN` |" in standard
        decode = page.split("### Decode Backends")[1]
        assert "| `TRITON_MLA` |" in decode and "| `FLASHMLA` |" in decode


def test_python_warnings_from_parsing_do_not_leak(tmp_path):
    """Analysed code's own SyntaxWarnings (invalid escapes, ``1if``) are not ours:
    they neither reach the user's warning filters nor cost the row under ``-W error``."""
    body = 'PATTERN = "\\d+"\nWEIRD = [0x1for x in y]\nsupported_dtypes = [torch.float32]\n'
    source = backend_source("TritonAttentionBackend", body)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        analysis = fault(tmp_path / "a", {TRITON: source})
    assert [str(w.message) for w in seen] == []
    assert [r.cell("Dtypes") for r in rows(analysis, "TRITON_ATTN")] == ["fp32"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        analysis = fault(tmp_path / "b", {TRITON: source})
    assert diags(analysis, TRITON) == []
    assert [r.cell("Dtypes") for r in rows(analysis, "TRITON_ATTN")] == ["fp32"]
