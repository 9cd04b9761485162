"""Who hears a read (source/recording.ReadLog): a recording hears what is read
through its tree and the trees sharing its parsing (they share the pieces), and
nothing read through a tree of another lineage."""

from __future__ import annotations

from pathlib import Path

from sphinxext_attn.pyeval import Interpreter
from sphinxext_attn.pyeval.mutations import rebound_at_import
from sphinxext_attn.source.chunks import split_chunks
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.source.views import OUTLINE, RAW, FileViews

MODULE = "import os\n\nx = 1\n\n\ndef f():\n    global x\n    x = 2\n\n\ny = x\n"
REL = "vllm/m.py"


def _root(tmp_path: Path, name: str, text: str = MODULE) -> Path:
    root = tmp_path / name
    (root / "vllm").mkdir(parents=True)
    (root / "vllm" / "m.py").write_text(text, encoding="utf-8")
    return root


def test_a_recording_hears_a_piece_read_through_a_tree_sharing_its_parsing(
    tmp_path: Path,
) -> None:
    page = SourceTree(_root(tmp_path, "a"))
    evaluator = SourceTree(page.root)
    evaluator.share_parsing(page)
    with page.recording() as read:
        chunks = evaluator.chunks(REL)
        assert chunks is not None
        assert chunks[2].text.startswith("def f")
        evaluator.search(REL, "global")
    assert read.views == {REL: {OUTLINE, ("chunk", 2), ("search", "global")}}
    assert read.paths == {}  # paths and warnings stay each tree's own
    with page.recording() as again:  # the page's own reads of the shared pieces
        pieces = page.chunks(REL)
        assert pieces is chunks
        pieces[1].nodes()
    assert again.views == {REL: {OUTLINE, ("chunk", 1)}}


def test_a_recording_hears_nothing_read_through_a_tree_of_another_root(tmp_path: Path) -> None:
    mine = SourceTree(_root(tmp_path, "a"))
    other = SourceTree(_root(tmp_path, "b"))
    alone = SourceTree(mine.root)  # the same root, but its own parsing
    with mine.recording() as read:
        for tree in (other, alone):
            chunks = tree.chunks(REL)
            assert chunks is not None
            assert chunks[0].text == "import os\n\n"
            chunks[1].nodes()
            tree.text(REL)
        mine.text(REL)
    assert read.views == {REL: {RAW}}
    assert read.paths == {REL: None}


def test_reused_parsing_notes_the_pieces_it_carries_over(tmp_path: Path) -> None:
    root = _root(tmp_path, "a")
    (root / "vllm" / "n.py").write_text("z = 3\n", encoding="utf-8")
    before = SourceTree(root)
    kept, edited = before.chunks(REL), before.chunks("vllm/n.py")
    (root / "vllm" / "n.py").write_text("z = 4\n", encoding="utf-8")
    after = SourceTree(root)
    after.reuse_parsing(before, ["vllm/n.py"])
    with after.recording() as read:
        carried, cut = after.chunks(REL), after.chunks("vllm/n.py")
        assert carried is kept and cut is not edited and cut is not None and kept is not None
        assert kept[3].text == "y = x\n"
        assert cut[0].text == "z = 4\n"
    assert read.views == {REL: {OUTLINE, ("chunk", 3)}, "vllm/n.py": {OUTLINE, ("chunk", 0)}}


def test_the_evaluators_scans_are_noted_in_the_log_of_the_tree_it_loaded_from(
    tmp_path: Path,
) -> None:
    tree = SourceTree(_root(tmp_path, "a"))
    interp = Interpreter(tree)
    with tree.recording() as read:
        module = interp.module("vllm.m")
        assert module is not None
        assert not module.has_walrus
        assert rebound_at_import(module, "x") == 0  # f is never called at import
    assert {("mention", ":="), ("mention", "global"), ("mention", "x")} <= read.views[REL]
    assert ("chunk", 2) in read.views[REL]  # the def that holds ``global x``, parsed


def test_pieces_no_tree_made_note_nothing(tmp_path: Path) -> None:
    """Pieces of a text compared across an edit (views.FileViews) or cut by hand."""
    tree = SourceTree(_root(tmp_path, "a"))
    views = FileViews(REL, MODULE)
    with tree.recording() as read:
        assert views.view(("chunk", 2)) is not None
        for chunk in [*views.chunks(), *split_chunks(MODULE, REL)]:
            assert chunk.log is None
            chunk.nodes()
            assert chunk.text
    assert read.views == {}
