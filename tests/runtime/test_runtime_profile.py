"""The runtime profile end to end: rows from the evaluator's answers, a tree that is
never imported or executed, and real vLLM releases scored against their truth."""

from __future__ import annotations

import builtins
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import vllm_trees
from known import assert_exactly
from runtime_trees import BACKEND_INTERFACE, RUNTIME_FILES, runtime_backend, runtime_tree
from treebuilder import (
    BACKENDS,
    DEFAULT_ENTRIES,
    REGISTRY,
    backend_source,
    dedent,
    registry_source,
    rows,
)

from sphinxext_attn.analysis.pipeline import analyze

FILE = "vllm/v1/attention/backends/my_attn.py"
OTHERS = {"FLASH_ATTN", "TRITON_ATTN", "FLASHINFER", "TRITON_MLA", "CPU_ATTN"}


def only(analysis: Any, name: str) -> Any:
    found = rows(analysis, name)
    assert len(found) == 1, (name, found, analysis.diagnostics)
    return found[0]


BY_GPU = """
@classmethod
def get_supported_head_sizes(cls):
    if current_platform.is_device_capability_family(100):
        return [64, 128, 256]
    return [64, 128]

@classmethod
def supports_compute_capability(cls, capability):
    return capability.major == 12 or capability == DeviceCapability(9, 0)

@classmethod
def supports_kv_cache_dtype(cls, kv_cache_dtype):
    return kv_cache_dtype in ("auto", "fp8") and current_platform.has_device_capability(89)

@classmethod
def supports_attn_type(cls, attn_type):
    return attn_type in (AttentionType.DECODER, AttentionType.ENCODER_ONLY)

@classmethod
def supports_alibi_sqrt(cls):
    return True

@staticmethod
def get_supported_kernel_block_sizes():
    return [MultipleOf(16), 32]
"""


def test_rows_join_answers_over_the_capability_grid(tmp_path):
    iface = RUNTIME_FILES[BACKEND_INTERFACE]
    iface += "\n    @classmethod\n    def supports_alibi_sqrt(cls):\n        return False\n"
    header = "from vllm.platforms import current_platform\n"
    runtime_backend(tmp_path, BY_GPU, header=header, extra={BACKEND_INTERFACE: iface})
    analysis = analyze(tmp_path)
    row = only(analysis, "MY_ATTN")
    assert row.unknown == {}
    assert row.supports["head_sizes"] == [64, 128, 256]  # 256 only on the 10.x family
    assert row.supports["compute_capabilities"] == ["9.0", "12.0", "12.1"]
    assert row.supports["block_sizes"] == ["%16"]  # 32 is a multiple of 16: the same set
    # the cell is the declared list (the interface's); the check, which the selection
    # asks, accepts fp8 from SM 8.9 on: the note says so
    assert set(row.kv_cache_dtypes) == {"auto", "bfloat16"}
    assert row.notes == {
        "KV Dtypes": "supports_kv_cache_dtype(), which vLLM's selection asks, accepts auto, "
        "fp8 instead (on some GPUs)"
    }
    assert row.attn_types == "Decoder, Encoder Only"
    assert row.extras == {"supports_alibi_sqrt": True}
    assert only(analysis, "TRITON_ATTN").extras == {"supports_alibi_sqrt": False}
    assert not [d for d in analysis.diagnostics if d.location and d.location.path == FILE]


def test_a_markdown_page_asks_only_its_own_columns(tmp_path, capsys):
    """The command line's markdown page has vLLM's page columns only, so a capability
    outside them is not asked (a hostile body there costs nothing); JSON asks it."""
    from sphinxext_attn.cli.main import main

    iface = RUNTIME_FILES[BACKEND_INTERFACE]
    iface += "\n    @classmethod\n    def supports_alibi_sqrt(cls):\n        return False\n"
    body = "@classmethod\ndef supports_alibi_sqrt(cls):\n    while True:\n        pass\n"
    runtime_backend(tmp_path, body, extra={BACKEND_INTERFACE: iface})
    base = ["--root", str(tmp_path), "--no-cache", "-o", "-"]
    assert main(base) == 0
    page = capsys.readouterr()
    assert "MY_ATTN" in page.out
    assert "supports_alibi_sqrt" not in page.err
    assert main([*base, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rows = [r for r in data["backends"] if r["name"] == "MY_ATTN"]
    assert rows and "supports_alibi_sqrt" in rows[0]["unknown"]
    assert rows[0]["extras"]["supports_alibi_sqrt"] is None


def test_a_question_the_release_does_not_have_is_not_an_unknown(tmp_path):
    """A flag the release's backend interface does not declare (supports_non_causal
    before vLLM had it) is a question that release never asks: no unknown cell and
    no note for each backend. One the interface declares but a class's body fails
    on is still unknown, with the exception."""
    iface = RUNTIME_FILES[BACKEND_INTERFACE].replace(
        "    @classmethod\n    def supports_non_causal(cls):\n        return False\n", ""
    )
    assert "supports_non_causal" not in iface
    body = "@classmethod\ndef supports_sink(cls):\n    return cls.no_such_member\n"
    runtime_backend(tmp_path, body, extra={BACKEND_INTERFACE: iface})
    analysis = analyze(tmp_path)
    for name in ("MY_ATTN", "TRITON_ATTN"):
        assert "Non-Causal" not in only(analysis, name).unknown
    assert "AttributeError" in only(analysis, "MY_ATTN").unknown["Sink"]
    assert not [d for d in analysis.diagnostics if "supports_non_causal" in d.message]


COMPOSITE = """
from vllm.v1.attention.backend import AttentionBackend
from vllm.v1.attention.backends.triton_attn import TritonAttentionBackend


def create_composite_backend(general, causal, *, head_sizes=()):
    class CompositeBackend(general):
        @classmethod
        def get_supported_head_sizes(cls):
            return list(head_sizes)

        @classmethod
        def supports_sink(cls):
            return causal.supports_sink()

    return CompositeBackend


class Causal(AttentionBackend):
    @classmethod
    def supports_sink(cls):
        return True


MixedBackend = create_composite_backend(TritonAttentionBackend, Causal, head_sizes=(80, 112))
"""


def test_a_backend_built_by_a_call_gets_a_row(tmp_path):
    module = "vllm/v1/attention/backends/composite.py"
    path = "vllm.v1.attention.backends.composite.MixedBackend"
    entries = {**DEFAULT_ENTRIES, "MIXED": path}
    runtime_tree(tmp_path, {module: dedent(COMPOSITE), REGISTRY: registry_source(entries)})
    analysis = analyze(tmp_path)
    row = only(analysis, "MIXED")
    assert row.supports["head_sizes"] == [80, 112]
    assert row.supports_sink is True
    assert row.dtypes == ("fp16", "bf16", "fp32")  # TritonAttentionBackend's, inherited
    # at most a note that the class is built at run time, never a warning
    assert not [d for d in analysis.diagnostics if "MixedBackend" in d.message and not d.release]
    assert "MIXED" not in {r.name for r in analyze(tmp_path, profile="vllm-page").backends}


def test_registry_paths_outside_the_tree_are_diagnosed_and_never_read(tmp_path, monkeypatch):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "evil.py").write_text("class Evil:\n    pass\n")
    root = tmp_path / "root"
    entries = {
        "DOTS": "...outside.evil.Evil",
        "SLASH": "../../outside/evil.Evil",
        "LINKED": "vllm.v1.attention.backends.linked.evil.Evil",
        "LINKED_FILE": "vllm.v1.attention.backends.evil_link.Evil",
    }
    runtime_backend(
        root, "pass\n", extra={REGISTRY: registry_source({**DEFAULT_ENTRIES, **entries})}
    )
    (root / BACKENDS / "linked").symlink_to(outside, target_is_directory=True)
    (root / BACKENDS / "evil_link.py").symlink_to(outside / "evil.py")
    opened: list[str] = []
    real_open = open

    def spy(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(os.path.realpath(file) if isinstance(file, str | Path) else str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", spy)
    analysis = analyze(root)
    names = {r.name for r in analysis.backends}
    assert names >= OTHERS and not names & set(entries)
    for name in entries:
        found = [d for d in analysis.diagnostics if d.message.startswith(f"{name}:")]
        assert found and found[0].location and found[0].location.path == REGISTRY, name
    assert str((root / REGISTRY).resolve()) in opened  # the spy saw the reads
    assert not [p for p in opened if p.startswith(str(outside))]


# -- the analysed code is never imported or executed -------------------------------------
EVIL = """
import sphinxext_attn_marker_module
open(r"{marker}", "w").write("module level ran")
raise SystemExit("module level ran")


class MyBackend(AttentionBackend):
    side = open(r"{marker}", "w")

    @classmethod
    def supports_head_size(cls, head_size, _unused=open(r"{marker}", "w")):
        return True

    @classmethod
    def get_supported_head_sizes(cls):
        exec("open(r'{marker}', 'w')")
        return [__import__("os").system("touch {marker}")]
"""
ONLY_AST = 0x400  # ast.PyCF_ONLY_AST


def test_the_tree_is_never_imported_or_executed(tmp_path, monkeypatch):
    marker = tmp_path / "marker"
    root = tmp_path / "tree"
    evil = backend_source("Unused", "pass\n") + dedent(EVIL).format(marker=marker)
    runtime_backend(root, "pass\n", extra={FILE: evil})
    calls: list[tuple[str, Any]] = []
    parsed: list[str] = []  # ast.parse: compile(..., PyCF_ONLY_AST), allowed

    def guard(name: str, real: Any) -> Any:
        def spy(*args: Any, **kwargs: Any) -> Any:
            flags = args[3] if len(args) > 3 else kwargs.get("flags", 0)
            if name == "compile" and flags & ONLY_AST:
                parsed.append(args[1] if len(args) > 1 else "")
            else:
                calls.append((name, args[0] if args else None))
            return real(*args, **kwargs)

        return spy

    for name in ("exec", "eval", "compile"):
        monkeypatch.setattr(builtins, name, guard(name, getattr(builtins, name)))
    real_import = builtins.__import__

    def no_tree_imports(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.split(".")[0] in ("vllm", "torch", "sphinxext_attn_marker_module"):
            calls.append(("import", name))
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tree_imports)
    before = set(sys.modules)
    analysis = analyze(root)
    monkeypatch.undo()
    assert FILE in parsed or any(FILE in str(p) for p in parsed)  # the spies were in place
    assert not marker.exists()
    new = {m.split(".")[0] for m in set(sys.modules) - before}
    assert not new & {"vllm", "torch", "sphinxext_attn_marker_module"}
    assert "sphinxext_attn_marker_module" not in sys.modules
    assert not [c for c in calls if "marker" in str(c[1]) or c[0] == "import"], calls
    # exec/eval of our own modules and dataclasses is Python's business; of the tree's, never
    from_tree = [
        c
        for c in calls
        if str(root) in str(getattr(c[1], "co_filename", ""))
        or (
            isinstance(c[1], str | bytes)
            and ("AttentionBackend" in str(c[1]) or "vllm" in str(c[1]))
        )
    ]
    assert from_tree == []
    assert {r.name for r in analysis.backends} >= OTHERS
    row = only(analysis, "MY_ATTN")
    assert "open" in row.unknown["Head Sizes"] or "exec" in row.unknown["Head Sizes"]


# -- real releases ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def runtime_033() -> Any:
    return vllm_trees.analysis("0.33.0", "runtime")


@pytest.mark.realtree
def test_0_33_flashmla_head_sizes_and_dcp(runtime_033):
    (row,) = [r for r in runtime_033.backends if r.name == "FLASHMLA"]
    assert set(row.supports["head_sizes"]) == {320, 512, 576}
    assert row.supports_dcp is True
    assert "DCP" not in row.unknown and "Head Sizes" not in row.unknown


@pytest.mark.realtree
def test_0_33_b12x_is_blackwell_consumer_only(runtime_033):
    (row,) = [r for r in runtime_033.backends if r.name == "B12X"]
    assert row.supports["compute_capabilities"] == ["12.0", "12.1"]


@pytest.mark.realtree
def test_0_33_composite_backends_have_rows(runtime_033):
    names = {r.name for r in runtime_033.backends}
    assert {"TRITON_FLASH_ATTN", "TRITON_FLASHINFER"} <= names
    for name in ("TRITON_FLASH_ATTN", "TRITON_FLASHINFER"):
        (row,) = [r for r in runtime_033.backends if r.name == name]
        assert row.supports.get("head_sizes"), (name, row.unknown)


def _shared() -> Path:
    shared = vllm_trees.shared_dir()
    if not (shared / "tools" / "truthcmp").is_file():
        vllm_trees.unavailable(f"{shared / 'tools' / 'truthcmp'} not present")
    return shared


#: The head sizes truthcmp's truth files were asked on.
TRUTH_HEAD_GRID = (8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 112, 120, 128, 160, 192, 224)
TRUTH_HEAD_GRID += (256, 288, 320, 384, 512, 576, 640, 768, 1024)


def grid_sizes(path: Path) -> None:
    """truthcmp reads ``supports.head_sizes`` items as sizes: each rule item is
    replaced by the sizes of its grid the rule accepts (``exactcmp`` and
    tests/runtime/test_exact_sets.py score the rules themselves)."""
    data = json.loads(path.read_text())
    for row in data["backends"]:
        items = row.get("supports", {}).get("head_sizes")
        if not isinstance(items, list):
            continue
        sizes = {i for i in items if isinstance(i, int)}
        for rule in (i for i in items if isinstance(i, dict)):
            lo, hi, step = rule["min"] or 1, rule["max"], rule["multiple_of"] or 1
            sizes |= {
                h for h in TRUTH_HEAD_GRID if h >= lo and (hi is None or h <= hi) and h % step == 0
            }
        row["supports"]["head_sizes"] = sorted(sizes)
    path.write_text(json.dumps(data))


@pytest.mark.realtree
@pytest.mark.parametrize("version", ["0.16.0", "0.23.0", "0.33.0"])
def test_cli_json_differs_from_the_truth_in_the_listed_cells_only(tmp_path, version):
    shared = _shared()
    truth = shared / "vllm" / "truth" / f"truth-{version}.json"
    if not truth.is_file():
        vllm_trees.unavailable(f"{truth} not present")
    root = vllm_trees.tree(version)
    out = tmp_path / f"analysis-{version}.json"
    cli = [sys.executable, "-m", "sphinxext_attn", "--root", str(root), "--format", "json"]
    subprocess.run([*cli, "-o", str(out)], check=True, capture_output=True, timeout=600)
    assert json.loads(out.read_text())["backends"]
    grid_sizes(out)
    tool = shared / "tools" / "truthcmp"
    done = subprocess.run(
        [sys.executable, str(tool), str(truth), str(out), "-v"],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    match = re.search(r"TRUTH (\d+)/(\d+) ", done.stdout.strip().splitlines()[-1])
    assert match and int(match.group(2)) > 100, done.stdout
    # "  FLASHMLA Head Sizes: page [...] truth [...]" -> "FLASHMLA Head Sizes"
    cells = [ln.strip().split(":")[0] for ln in done.stdout.splitlines() if ln[:2] == "  "]
    assert int(match.group(2)) - int(match.group(1)) == len(cells), done.stdout
    assert_exactly(cells, "truth", version)


GPU_CHOSEN_METHOD = """
if current_platform.is_device_capability_family(100):

    @classmethod
    def supports_head_size(cls, head_size):
        return head_size in (64, 256)

else:

    @classmethod
    def supports_head_size(cls, head_size):
        return head_size == 128
"""


def test_a_method_the_class_body_picks_by_gpu_is_looked_up_per_gpu(tmp_path):
    """The method looked up for a grid is reused only when finding it read no GPU."""
    header = "from vllm.platforms import current_platform\n"
    runtime_backend(tmp_path, GPU_CHOSEN_METHOD, header=header)
    row = only(analyze(tmp_path), "MY_ATTN")
    assert row.unknown == {}
    assert row.supports["head_sizes"] == [64, 128, 256]


UNDECLARED = """
supported_kv_cache_dtypes = ["auto", "bfloat16"]

@classmethod
def supports_kv_cache_dtype(cls, kv_cache_dtype):
    return kv_cache_dtype is None or kv_cache_dtype.startswith(("auto", "bfloat16", "fp8"))
"""


def test_kv_dtypes_are_the_declared_list_with_a_note_on_the_check(tmp_path):
    """A check that accepts dtypes the class does not declare: the cell is the declared
    list (what vLLM names as the backend's KV dtypes), the note names the rest, and the
    JSON carries the note."""
    from sphinxext_attn.render.jsonout import to_data

    runtime_backend(tmp_path, UNDECLARED)
    analysis = analyze(tmp_path)
    row = only(analysis, "MY_ATTN")
    assert row.kv_cache_dtypes == ("auto", "bfloat16")
    assert row.notes["KV Dtypes"].endswith("also accepts fp8, fp8_e4m3, fp8_e5m2")
    assert row.sources["KV Dtypes"].path == FILE  # the line that declares the list
    (data,) = [b for b in to_data(analysis)["backends"] if b["name"] == "MY_ATTN"]
    assert data["notes"] == dict(row.notes)
    # the same list and check: no note
    same = UNDECLARED.replace('"bfloat16"]', '"bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2"]')
    runtime_backend(tmp_path, same)
    assert only(analyze(tmp_path), "MY_ATTN").notes == {}


COMPUTED_KV = """
supported_kv_cache_dtypes = torch.get_kv_dtypes()

@classmethod
def supports_kv_cache_dtype(cls, kv_cache_dtype):
    return kv_cache_dtype in ("auto", "fp8")
"""


def test_a_list_that_cannot_be_read_leaves_the_checks_answer(tmp_path):
    runtime_backend(tmp_path, COMPUTED_KV, header="import torch\n")
    row = only(analyze(tmp_path), "MY_ATTN")
    assert row.kv_cache_dtypes == ("auto", "fp8") and row.notes == {}


BLOCKS_BY_GPU = """
@staticmethod
def get_supported_kernel_block_sizes():
    return [64 if current_platform.is_device_capability_family(90) else 128]

@classmethod
def supports_compute_capability(cls, capability):
    return capability.major in (9, 10)
"""


def test_block_sizes_the_class_picks_by_gpu_are_given_per_gpu(tmp_path):
    """Each size with the GPUs (of those the backend supports) that take it; the JSON
    gives the union and the sizes per capability."""
    header = "from vllm.platforms import current_platform\n"
    runtime_backend(tmp_path, BLOCKS_BY_GPU, header=header)
    row = only(analyze(tmp_path), "MY_ATTN")
    assert row.cell("Block Sizes") == "64 (9.x), 128 (10.x)"
    assert row.supports["block_sizes"] == ["64", "128"]
    assert row.supports["block_sizes_by_capability"] == {
        "9.0": ["64"],
        "10.0": ["128"],
        "10.3": ["128"],
    }
    # supported on 10.x only: one answer, no GPU named
    runtime_backend(tmp_path, BLOCKS_BY_GPU.replace("(9, 10)", "(10,)"), header=header)
    row = only(analyze(tmp_path), "MY_ATTN")
    assert row.cell("Block Sizes") == "128"
    assert "block_sizes_by_capability" not in row.supports


@pytest.mark.parametrize(
    ("header", "check", "cell", "listed"),
    [
        # major == 12: 13.0 is told apart (the next major), and refused
        ("", "capability.major == 12", "12.x", ["12.0", "12.1"]),
        # from 8.0 on, later majors included
        ("", "capability.major >= 8", "≥8.0", None),
        # a pair off the grid in a module constant the check reads
        (
            "_CAPS = ((10, 0), (10, 7))\n",
            "(capability.major, capability.minor) in _CAPS",
            "10.0, 10.7",
            ["10.0"],
        ),
        # the capability as an int, compared with one off the grid
        ("", "capability.to_int() >= 60 and capability.to_int() < 75", "6.x, 7.0", ["7.0"]),
    ],
)
def test_compute_capability_is_exact_over_what_the_code_tells_apart(
    tmp_path, header, check, cell, listed
):
    """The check is also asked on the capabilities its code names (and the next
    major): the cell is exact over them; the JSON keeps the contract's grid."""
    body = f"@classmethod\ndef supports_compute_capability(cls, capability):\n    return {check}\n"
    runtime_backend(tmp_path, body, header=header)
    row = only(analyze(tmp_path), "MY_ATTN")
    assert row.unknown == {}
    assert row.compute_capability == cell
    if listed is not None:
        assert row.supports["compute_capabilities"] == listed


def test_each_capability_is_asked_once_and_an_unknown_one_again(tmp_path, monkeypatch):
    """The runs that read which capabilities the check names answer for the grid: the
    cell asks the check only on the points off it (10.7, which it names; the next
    major, 11.0, is on the grid). A grid point those runs could not answer is asked
    again, and its reason is the cell's."""
    from sphinxext_attn.runtime.questions import Asker
    from sphinxext_attn.vocab.names import CAPABILITIES

    asked: list[tuple[int, int] | None] = []
    call = Asker.call

    def counted(self: Asker, name: str, *args: Any, capability: Any = None) -> Any:
        if name == "supports_compute_capability" and self.cls.name == "MyBackend":
            asked.append(capability)
        return call(self, name, *args, capability=capability)

    monkeypatch.setattr(Asker, "call", counted)
    check = "capability.major == 10 and capability != DeviceCapability(10, 7)"
    body = f"@classmethod\ndef supports_compute_capability(cls, capability):\n    return {check}\n"
    runtime_backend(tmp_path, body)
    row = only(analyze(tmp_path), "MY_ATTN")
    assert row.supports["compute_capabilities"] == ["10.0", "10.3"]
    assert sorted(asked) == sorted([*CAPABILITIES, (10, 7)])
    # unknown on 8.0 only (a call out of the tree): asked there twice, the cell unknown
    asked.clear()
    check = "torch.cuda.is_available() if capability == DeviceCapability(8, 0) else True"
    body = f"@classmethod\ndef supports_compute_capability(cls, capability):\n    return {check}\n"
    runtime_backend(tmp_path, body)
    row = only(analyze(tmp_path), "MY_ATTN")
    assert "Compute Cap." in row.unknown
    assert "torch.cuda.is_available" in row.unknown["Compute Cap."]
    assert asked.count((8, 0)) == 2
