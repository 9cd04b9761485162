"""Edges of the command line a sampled mutation run found unpinned, each test
failing with the mutant it was written for.

Mutants argued equivalent:
- in ``check_source_links`` the trial ``line=1`` -> ``line=2``: the check only asks
  whether the format string takes a path, a line and a version; any field spec that
  formats one positive one-digit int formats the other (and both fail alike otherwise).
- ``write_diff`` reading the old tree without its extra capabilities (``extras``
  True -> False): a diff compares only the page's columns (model/diff.DIFF_COLUMNS),
  never the extras, so only the run cache's key differs (the diffs of 0.33.0 against
  0.32.0 and 0.16.0 came out byte-identical, markdown and JSON).
- select's ``environment.platform == "rocm"`` -> ``>=`` (also tpu, xpu): the capability
  derived there is read only by ``echo``, and only for rocm; the lookup is guarded and
  runs on a tree of its own (select --platform xpu/cpu on the demo tree byte-identical).
- decisions.decide_all ``pending.pop(0)`` -> ``pop(-1)``: the case decided first only
  readies the evaluator; every answer is kept by its case's key and decisions do not
  depend on order, so which pending case goes first changes nothing seen."""

from __future__ import annotations

import json
import os

import pytest
from treebuilder import DEMO_TREE

from sphinxext_attn.cli.main import main
from sphinxext_attn.cli.pagefile import generator_keys


def test_a_tree_without_the_page_generator_has_no_marker_keys(tmp_path):
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "__init__.py").write_text("")
    assert generator_keys(tmp_path) is None
    assert generator_keys(DEMO_TREE) is None


def test_select_help_states_each_flags_default(capsys):
    with pytest.raises(SystemExit):
        main(["select", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "KV cache block size, a positive integer (default: the engine's default)" in text
    assert "number of attention heads, a positive integer (default: unknown)" in text
    assert "attention sinks (default: off)" in text
    assert "attention head size, a positive integer (default: 128)" in text
    assert "GPU compute capability MAJOR.MINOR, e.g. 8.0, 9.0, 10.0, 12.0 (default: 9.0)" in text
    assert "(default: bf16)" in text and "(default: decoder)" in text


def _select_json(capsys, *flags: str) -> dict:
    assert (
        main(["select", "--root", str(DEMO_TREE), *flags, "--format", "json", "--no-cache"]) == 0
    )
    return json.loads(capsys.readouterr().out)


def test_the_capability_is_a_default_only_where_the_platform_asks_for_one(capsys):
    assert "capability" in _select_json(capsys)["configuration"]["defaults"]
    rocm = _select_json(capsys, "--platform", "rocm")["configuration"]["defaults"]
    assert "capability" not in rocm and "arch" in rocm and "dtype" in rocm


def test_a_backend_per_kind_needs_a_release_that_has_them(capsys):
    argv = ["select", "--root", str(DEMO_TREE), "--backend", "mla_attention=FLASHMLA"]
    assert main([*argv, "--no-cache"]) == 2
    assert "this release has no per-kind backends" in capsys.readouterr().err


def test_a_case_asking_for_a_backend_the_release_lacks_is_refused(capsys, tmp_path):
    cases = tmp_path / "cases.json"
    case = {"config": {"head_size": 128, "dtype": "bf16"}, "capability": "9.0"}
    cases.write_text(json.dumps([case, {**case, "selected_backend": "NOT_A_BACKEND"}]))
    argv = ["select", "--root", str(DEMO_TREE), "--cases", str(cases), "--no-cache"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "case 1: selected_backend" in err and "NOT_A_BACKEND" in err


def test_select_help_names_the_attention_type_flags_value_type(capsys):
    """``--attn-type TYPE`` (not ATTN_TYPE); the other flags keep argparse's name."""
    with pytest.raises(SystemExit):
        main(["select", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--attn-type TYPE " in text and "ATTN_TYPE" not in text
    assert "--head-size HEAD_SIZE " in text and "--dtype DTYPE " in text


def test_the_documented_number_of_run_cache_entries_is_kept(tmp_path):
    """docs/cli.rst says how many entries the run cache keeps: that many are kept."""
    import re
    from pathlib import Path

    from sphinxext_attn.cli.runcache import RunCache

    docs = (Path(__file__).resolve().parents[2] / "docs" / "cli.rst").read_text(encoding="utf-8")
    found = re.search(r"The (\d+) most recently used entries are kept", " ".join(docs.split()))
    assert found is not None
    kept = int(found.group(1))
    store = RunCache(tmp_path / "cache")
    for i in range(kept + 1):
        store.store("x", tmp_path, {"i": i}, i, [])
    assert len(list((tmp_path / "cache").glob("*.pickle"))) == kept


def test_check_leaves_a_marker_page_alone_only_for_the_markdown_page(tmp_path, capsys):
    """``--check`` of the markdown page passes on a page holding vLLM's gen: markers
    (vLLM fills them); asked for JSON there, the page is never written over."""
    page = tmp_path / "page.md"
    page.write_text('# Attention backends\n\n--8<-- "gen:table-main"\n', encoding="utf-8")
    argv = ["--root", str(DEMO_TREE), "-o", str(page), "--check", "--no-cache"]
    assert main(argv) == 0
    assert "Left as it is" in capsys.readouterr().out
    assert main([*argv, "--format", "json"]) == 2
    assert "not written over" in capsys.readouterr().err
    assert page.read_text(encoding="utf-8").endswith('"gen:table-main"\n')


def test_a_kept_copy_of_a_file_is_read_only_when_it_is_the_users_own(tmp_path, monkeypatch):
    """A kept text owned by another user is not trusted, whichever id is larger."""
    import os

    from sphinxext_attn.cli.runcache import RunCache

    if not hasattr(os, "getuid"):
        pytest.skip("no user ids here")
    cache = RunCache(tmp_path / "cache")
    cache.keep_text(tmp_path, "vllm/x.py", (1, 2, 3), b"text")
    assert cache.kept_text(tmp_path, "vllm/x.py", (1, 2, 3)) == b"text"
    owner = os.getuid()
    for other in (owner + 1, owner - 1):
        if other >= 0:
            monkeypatch.setattr(os, "getuid", lambda other=other: other)
            assert cache.kept_text(tmp_path, "vllm/x.py", (1, 2, 3)) is None


def test_an_output_that_cannot_be_written_is_said_in_words(tmp_path):
    """The system's reason (``Not a directory``), not the exception's own text."""
    from sphinxext_attn.cli.checks import BadInput, write_output

    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(BadInput) as raised:
        write_output(blocker / "page.md", "text")
    message = str(raised.value)
    assert message.startswith(f"-o {blocker / 'page.md'}: cannot write: ")
    assert "Errno" not in message and "[" not in message


def test_a_link_template_that_fails_on_a_cell_is_refused(tmp_path, capsys):
    """``{version[4]}`` passes the trial version 0.0.0 but not a tree without one."""
    argv = ["--root", str(DEMO_TREE), "-o", str(tmp_path / "page.md"), "--no-cache"]
    assert main([*argv, "--source-links", "https://x/{path}#L{line}?v={version[4]}"]) == 2
    assert "bad --source-links template: IndexError" in capsys.readouterr().err
    assert not (tmp_path / "page.md").exists()


def test_diff_is_written_in_the_format_asked_for(tmp_path, capsys):
    argv = ["--profile", "vllm-page", "--root", str(DEMO_TREE), "--diff", str(DEMO_TREE)]
    assert main([*argv, "--no-cache", "-o", "-", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["added"] == [] and data["removed"] == [] and data["changes"] == []
    assert main([*argv, "--no-cache", "-o", "-"]) == 0
    assert capsys.readouterr().out.startswith("#")


def test_an_output_folder_is_asked_for_writing_and_entering(tmp_path, monkeypatch):
    """The check asks the system for write and search permission on the folder (as
    root every folder is writable, so the answer is faked: write refused)."""
    from sphinxext_attn.cli.checks import BadInput, check_output

    asked: list[int] = []

    def access(path, mode, **kwargs):
        asked.append(mode)
        return not mode & os.W_OK

    monkeypatch.setattr(os, "access", access)
    with pytest.raises(BadInput, match="is not writable"):
        check_output(str(tmp_path / "page.md"))
    assert asked == [os.W_OK | os.X_OK]


def test_json_names_each_cells_deciding_line_without_source_links(tmp_path, capsys):
    """JSON always carries ``sources`` (column -> path:line); a markdown page asks for
    them only with ``--source-links`` (``format == "json"`` -> ``>`` dropped them)."""
    assert main(["--root", str(DEMO_TREE), "--format", "json", "--no-cache", "-o", "-"]) == 0
    backends = json.loads(capsys.readouterr().out)["backends"]
    assert [b["name"] for b in backends if not b.get("sources")] == []
    first = backends[0]["sources"]
    assert first["Head Sizes"].startswith("vllm/") and first["Head Sizes"].split(":")[1].isdigit()


def test_one_backend_asked_for_is_answered(capsys):
    """``--backend NAME`` once is the request (``len(plain) > 1`` -> ``>= 1`` refused
    every request); twice is exit 2 and one line."""
    argv = ["select", "--root", str(DEMO_TREE), "--no-cache", "--format", "json"]
    assert main([*argv, "--backend", "FLASH_ATTN"]) == 0
    assert "FLASH_ATTN" in capsys.readouterr().out
    assert main([*argv, "--backend", "FLASH_ATTN", "--backend", "TRITON_ATTN"]) == 2
    assert "give one NAME" in capsys.readouterr().err


def test_fill_markers_needs_the_vllm_page_profile(capsys, tmp_path):
    """``--fill-markers`` with the runtime profile is exit 2 and one line (``!=`` ->
    ``>`` let "runtime", which sorts before "vllm-page", through)."""
    argv = ["--root", str(DEMO_TREE), "--fill-markers", "--no-cache", "-o", str(tmp_path / "p.md")]
    assert main(argv) == 2
    assert "--fill-markers needs --profile vllm-page" in capsys.readouterr().err


def test_fill_markers_takes_the_trees_own_page_as_template(tmp_path):
    from sphinxext_attn.cli.pagefile import TREE_PAGE, template_path

    assert template_path(None, True, False, None, tmp_path) == tmp_path / TREE_PAGE
    given = str(tmp_path / "mine.md")
    assert template_path(given, True, False, None, tmp_path) == tmp_path / "mine.md"


def test_only_warnings_about_a_plugins_own_files_are_printed_as_the_plugins():
    """A section's warning about vLLM's files, or about no file, is the page's own
    (``and`` -> ``or`` took every located warning, and failed on one without a place)."""
    from pathlib import Path

    from sphinxext_attn.cli.main import plugin_diagnostics
    from sphinxext_attn.model.plugin import Plugin
    from sphinxext_attn.model.records import Analysis, Diagnostic, Location

    plugin = Plugin(Path("/plugins/tpu"), ("tpu_inference",))
    inside = Diagnostic("bad class", Location("tpu_inference/backends/a.py", 3))
    own = Diagnostic("vLLM's own", Location("vllm/platforms/cuda.py", 1))
    nowhere = Diagnostic("no place")
    section = Analysis(root="r", diagnostics=[nowhere, own, inside, inside])
    assert plugin_diagnostics((plugin,), [section]) == [inside]
    assert plugin_diagnostics((plugin,), []) == []


def test_a_diff_given_an_output_file_is_written_there(tmp_path, capsys):
    """``--diff ... -o FILE`` writes FILE and says so (``args.output and`` negated
    printed the diff instead and wrote nothing)."""
    out = tmp_path / "diff.json"
    argv = ["--profile", "vllm-page", "--root", str(DEMO_TREE), "--diff", str(DEMO_TREE)]
    assert main([*argv, "--no-cache", "--format", "json", "-o", str(out)]) == 0
    assert capsys.readouterr().out == f"Generated: {out}\n"
    assert json.loads(out.read_text(encoding="utf-8"))["changes"] == []
