"""The safe evaluator on imports and the environment: module ``__getattr__``,
``TYPE_CHECKING`` and optional imports, ``importlib`` of packages outside the tree, a
built module the tree lacks (imported unless assumed missing), and ``os.environ``
reads as facts the answer rests on."""

from __future__ import annotations

from typing import Any

import pytest
from evaluator import HEADER, MODULE, NODE, ask, cm, load
from runtime_trees import runtime_backend
from treebuilder import BACKENDS, dedent

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter, Raised
from sphinxext_attn.pyeval.values import External
from sphinxext_attn.source.tree import SourceTree


def test_module_getattr_type_checking_and_optional_imports(tmp_path):
    lazy = dedent(
        """
        def __getattr__(name):
            if name == "SIZES":
                return [32, 64]
            raise AttributeError(name)
        """
    )
    header = HEADER + dedent(
        """
        from typing import TYPE_CHECKING

        from vllm.v1.attention.backends import lazy

        if TYPE_CHECKING:
            LIMIT = torch.cuda.unknowable()
        else:
            LIMIT = 256

        try:
            from flash_attn_not_installed import kernel
            HAS_KERNEL = True
        except ImportError:
            HAS_KERNEL = False
        """
    )
    body = cm("f", "return lazy.SIZES, LIMIT, HAS_KERNEL") + cm("g", "return lazy.OTHER")
    it, cls = load(tmp_path, body, header=header, extra={f"{BACKENDS}/lazy.py": lazy})
    assert ask(it, cls, "f") == ([32, 64], 256, True)  # the machine has every optional kernel
    with pytest.raises(Raised) as exc:
        ask(it, cls, "g")
    assert exc.value.kind == "AttributeError"


def test_import_module_of_a_package_outside_the_tree_imports(tmp_path):
    body = cm(
        "f",
        "import importlib",
        "a = importlib.import_module('flash_attn.ops')",
        "try:",
        "    importlib.import_module('vllm.not_here')",
        "except ImportError:",
        "    return a",
    )
    it, cls = load(tmp_path, body)
    assert ask(it, cls, "f") == External("flash_attn.ops")


ENVIRON_READS = cm(
    "f",
    "a = os.environ['VLLM_A'] if 'VLLM_A' in os.environ else 'unset'",
    "b = os.environ.get('VLLM_B', 'dflt')",
    "return a, b, 'VLLM_C' not in os.environ",
)


@pytest.mark.parametrize(
    ("env", "answer"),
    [({}, ("unset", "dflt", True)), ({"VLLM_A": "1", "VLLM_C": "x"}, ("1", "dflt", False))],
)
def test_environ_reads_are_facts_as_getenv_reads_are(tmp_path, env, answer):
    """``os.environ[...]``, ``in os.environ`` and ``os.environ.get`` read the variables
    as set (vLLM's defaults for the rest), and each read is a fact the answer rests on."""
    from sphinxext_attn.model.environment import Environment

    runtime_backend(tmp_path, ENVIRON_READS, header=HEADER)
    it = Interpreter(SourceTree(tmp_path), Machine(Environment(env=env)))
    cls = it.module_attr(it.module(MODULE), "MyBackend", NODE)
    it.capability_read = 0
    assert ask(it, cls, "f") == answer
    facts = dict(it.facts_of(it.capability_read))
    assert facts == {
        "VLLM_A": env.get("VLLM_A", "unset"),
        "VLLM_B": "unset",
        "VLLM_C": env.get("VLLM_C", "unset"),
    }
    missing = cm("g", "return os.environ['VLLM_MISSING']")
    runtime_backend(tmp_path, missing, header=HEADER)
    it = Interpreter(SourceTree(tmp_path), Machine())
    with pytest.raises(Raised, match="KeyError"):
        ask(it, it.module_attr(it.module(MODULE), "MyBackend", NODE), "g")


def test_a_built_module_missing_from_the_tree_imports_unless_assumed_missing(tmp_path):
    """A module of vLLM's wheel that the source tree does not hold (the FA4 cute-DSL
    modules, built with the wheel) imports on a full build; assumed missing
    (``installed.MODULE=false``, the first missing module) the import fails as
    Python's does, and ``{e!r}``/``{e}`` of the caught error are Python's texts."""
    from sphinxext_attn.model.environment import Environment

    body = cm(
        "f",
        "try:",
        "    from vllm.built.cute.interface import entry  # noqa: F401",
        "except Exception as e:",
        "    return f'failed: {e!r} / {e}'",
        "return 'imported'",
    )
    runtime_backend(tmp_path, body, header=HEADER)
    (tmp_path / "vllm" / "built").mkdir()
    (tmp_path / "vllm" / "built" / "__init__.py").write_text("")

    def answer(assume: dict[str, str]) -> Any:
        it = Interpreter(SourceTree(tmp_path), Machine(Environment(assume=assume)))
        return ask(it, it.module_attr(it.module(MODULE), "MyBackend", NODE), "f")

    assert answer({}) == "imported"
    assert answer({"installed.vllm.built.cute": "true"}) == "imported"
    missing = "No module named 'vllm.built.cute'"
    assert answer({"installed.vllm.built.cute": "false"}) == (
        f"failed: ModuleNotFoundError({missing!r}) / {missing}"
    )
    assert repr(ModuleNotFoundError(missing)) == f"ModuleNotFoundError({missing!r})"
