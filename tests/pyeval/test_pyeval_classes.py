"""The safe evaluator on classes: methods along an MRO across files, a class built
inside a function or made by a call, members a class body binds as Python runs it,
class attributes set by module-level code (unknown where they cannot be settled),
and what Python or a decorator may add to a class (unknown, not missing)."""

from __future__ import annotations

from typing import Any

import pytest
from evaluator import FILE, HEADER, MODULE, NODE, ask, cm, load
from runtime_trees import runtime_backend
from treebuilder import BACKENDS, dedent

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter, Raised, Unknown
from sphinxext_attn.pyeval.values import External
from sphinxext_attn.source.tree import SourceTree

MRO_FILES = {
    f"{BACKENDS}/mla/__init__.py": "",
    f"{BACKENDS}/mla/common.py": dedent(
        """
        from ...backend import AttentionBackend


        class MLACommonBackend(AttentionBackend):
            supported_kv_cache_dtypes = ["auto", "fp8", "fp8_e5m2"]
            block = 64

            @classmethod
            def get_supported_head_sizes(cls):
                return [576]

            @classmethod
            def is_mla(cls):
                return True

            @classmethod
            def supports_kv_cache_dtype(cls, kv_cache_dtype):
                if kv_cache_dtype == "fp8_e5m2":
                    return False
                return super().supports_kv_cache_dtype(kv_cache_dtype)
        """
    ),
    f"{BACKENDS}/mla/flashmla.py": dedent(
        """
        from .common import MLACommonBackend


        class MidBackend(MLACommonBackend):
            @classmethod
            def supports_kv_cache_dtype(cls, kv_cache_dtype):
                return kv_cache_dtype != "fp8" and super().supports_kv_cache_dtype(kv_cache_dtype)


        class LeafBackend(MidBackend):
            supported_kv_cache_dtypes = ["auto", "fp8", "fp8_e5m2", "fp8_e4m3"]

            @classmethod
            def get_supported_head_sizes(cls):
                return [*super().get_supported_head_sizes(), 512]
        """
    ),
}


def test_classmethods_along_a_three_level_mro_in_other_files(tmp_path):
    runtime_backend(tmp_path, "pass\n", extra=MRO_FILES)
    it = Interpreter(SourceTree(tmp_path), Machine())
    leaf = it.module_attr(
        it.module(f"{MODULE.rpartition('.')[0]}.mla.flashmla"), "LeafBackend", NODE
    )
    assert [ask(it, leaf, "supports_head_size", h) for h in (512, 576, 128)] == [True, True, False]
    assert ask(it, leaf, "is_mla") is True
    assert ask(it, leaf, "supports_dtype", External("torch.bfloat16")) is True
    assert ask(it, leaf, "supports_dtype", External("torch.float32")) is False
    # Leaf -> Mid (fp8 refused) -> MLACommon (fp8_e5m2 refused) -> AttentionBackend
    # (reads cls.supported_kv_cache_dtypes: Leaf's own list).
    got = {
        d: ask(it, leaf, "supports_kv_cache_dtype", d)
        for d in ("auto", "fp8", "fp8_e5m2", "fp8_e4m3", "bfloat16")
    }
    assert got == {
        "auto": True,
        "fp8": False,
        "fp8_e5m2": False,
        "fp8_e4m3": True,
        "bfloat16": False,
    }
    assert it.getattr(leaf, "block", NODE, "") == 64  # class attribute inherited


COMPOSITE = """
def make_composite(general, causal, *, name, head_sizes=()):
    class CompositeBackend(general):
        @classmethod
        def get_supported_head_sizes(cls):
            return list(head_sizes) or general.get_supported_head_sizes()

        @classmethod
        def supports_sink(cls):
            return general.supports_sink() and causal.supports_sink()

        @staticmethod
        def get_name():
            return name

    return CompositeBackend


class GeneralBackend(AttentionBackend):
    @classmethod
    def supports_sink(cls):
        return True


class CausalBackend(AttentionBackend):
    @classmethod
    def supports_sink(cls):
        return current_platform.get_device_capability().major >= 10
"""


def test_class_built_inside_a_function_closes_over_its_arguments(tmp_path):
    tail = "\n\nMyBackend = make_composite(\n    GeneralBackend, CausalBackend,"
    tail += " name='C', head_sizes=(64, 96)\n)\n"
    runtime_backend(tmp_path, "pass\n", class_name="Unused", header=HEADER + COMPOSITE)
    path = tmp_path / FILE
    path.write_text(path.read_text() + tail)
    it = Interpreter(SourceTree(tmp_path), Machine())
    cls = it.module_attr(it.module(MODULE), "MyBackend", NODE)
    assert [ask(it, cls, "supports_head_size", h) for h in (64, 96, 128)] == [True, True, False]
    assert ask(it, cls, "get_name") == "C"
    assert ask(it, cls, "supports_sink", capability=(9, 0)) is False
    assert ask(it, cls, "supports_sink", capability=(10, 0)) is True


def test_dcp_through_get_impl_cls_and_not_implemented(tmp_path):
    header = HEADER + "class Impl:\n    supports_dcp = True\n"
    it, cls = load(
        tmp_path, "@staticmethod\ndef get_impl_cls():\n    return Impl\n", header=header
    )
    assert ask(it, cls, "supports_dcp") is True
    it, cls = load(tmp_path / "b", "pass\n")  # the base's get_impl_cls raises NotImplementedError
    assert ask(it, cls, "supports_dcp") is False


def test_class_body_blocks_bind_members_as_python_runs_them(tmp_path):
    """Names bound inside ``if``/``try`` in a class body: the branch that runs
    (per GPU when its test reads the GPU), never silently the base's value."""
    body = "try:\n    X = 1\nexcept ImportError:\n    X = 2\n\n"
    body += "if False:\n    block = 99\n\n"
    body += (
        "if current_platform.has_device_capability(90):\n    size = 256\nelse:\n    size = 128\n\n"
    )
    body += cm("f", "return cls.size")
    body += cm("x", "return cls.X")
    body += cm("b", "return cls.block")
    it, cls = load(tmp_path, body)
    assert [ask(it, cls, "f", capability=c) for c in [(8, 0), (9, 0)]] == [128, 256]
    with pytest.raises(Unknown, match="capability"):
        ask(it, cls, "f")  # no GPU named: an explicit unknown, not one branch
    assert ask(it, cls, "x") == 1  # a ``try`` body runs; its handler does not
    with pytest.raises(Raised, match="AttributeError"):
        ask(it, cls, "b")  # bound only in a branch that does not run


def test_setattr_on_a_class_is_seen_by_later_calls(tmp_path):
    body = "counter = 0\n\n" + cm("get", "return cls.counter")
    body += cm("f", "a = cls.get()", "cls.counter = 5", "return a, cls.get()")
    it, cls = load(tmp_path, body)
    assert ask(it, cls, "f") == (0, 5)


def _with_trailer(tmp_path, body: str, trailer: str) -> tuple[Interpreter, Any]:
    """The backend module with ``trailer`` (module-level code) after the class."""
    runtime_backend(tmp_path, body, header=HEADER)
    path = tmp_path / FILE
    path.write_text(path.read_text() + "\n" + trailer)
    it = Interpreter(SourceTree(tmp_path), Machine())
    return it, it.module_attr(it.module(MODULE), "MyBackend", NODE)


@pytest.mark.parametrize(
    ("trailer", "want"),
    [
        ("MyBackend.size = 256\n", 256),  # runs after the class body: it wins
        ("MyBackend.size = 256\nMyBackend.size = 512\n", 512),
        ("def later():\n    MyBackend.size = 1\n", 128),  # only when called
        ("setattr(MyBackend, 'size', 256)\n", Unknown),
        ("MyBackend.size += 1\n", Unknown),
        ("if os.environ.get('X'):\n    MyBackend.size = 256\n", Unknown),
        ("try:\n    import foo\nexcept ImportError:\n    MyBackend.size = 1\n", Unknown),
        ("MyBackend.sizes.append(8)\n", 128),  # another attribute
    ],
)
def test_class_attributes_set_by_module_level_code(tmp_path, trailer, want):
    body = "size = 128\nsizes = [64]\n\n" + cm("f", "return cls.size")
    it, cls = _with_trailer(tmp_path, body, trailer)
    if want is Unknown:
        with pytest.raises(Unknown, match="set by module-level code") as caught:
            ask(it, cls, "f")
        assert caught.value.path == FILE and caught.value.line > 1
    else:
        assert ask(it, cls, "f") == want


def test_a_list_changed_by_module_level_code_is_unknown(tmp_path):
    body = "sizes = [64]\n\n" + cm("f", "return cls.sizes")
    it, cls = _with_trailer(tmp_path, body, "MyBackend.sizes.append(8)\n")
    with pytest.raises(Unknown, match="set by module-level code"):
        ask(it, cls, "f")


def test_a_class_made_by_a_call_reads_that_calls_arguments(tmp_path):
    """The class body runs lazily, after the call returned: the call memo must not
    answer ``make(4)`` with the class ``make(3)`` made."""
    header = HEADER + "\ndef make(n):\n    class Made:\n        val = n\n\n    return Made\n"
    header += "\ndef adder(n):\n    return lambda x: x + n\n"
    it, cls = load(
        tmp_path,
        cm("f", "return make(3).val, make(4).val, adder(1)(1), adder(2)(1)"),
        header=header,
    )
    assert ask(it, cls, "f") == (3, 4, 2, 3)


def test_what_python_adds_to_a_class_is_unknown_not_missing(tmp_path):
    """``__mro__`` or a named tuple's ``_replace`` exist in Python although the tree
    does not define them: unknown, never an AttributeError Python would not raise."""
    header = HEADER + "\nfrom typing import NamedTuple\n\nclass NT(NamedTuple):\n    major: int\n"
    header += "\nclass Same:\n    def __eq__(self, other):\n        return True\n"
    body = cm("mro", "return cls.__mro__") + cm("replace", "return NT(9)._replace(major=1)")
    body += cm("ne", "return Same() != 1, Same() == 1") + cm("missing", "return cls.nothing")
    it, cls = load(tmp_path, body, header=header)
    for name in ("mro", "replace"):
        with pytest.raises(Unknown, match="Python's own"):
            ask(it, cls, name)
    assert ask(it, cls, "ne") == (False, True)  # != inverts a user __eq__
    with pytest.raises(Raised, match="AttributeError"):
        ask(it, cls, "missing")  # an ordinary missing attribute still raises


def test_a_class_decorator_not_evaluated_makes_a_missing_member_unknown(tmp_path):
    """A tree decorator may add members (``c.extra = 7``): a member the class does
    not define is then unknown, not an AttributeError; dataclass adds none."""
    header = HEADER + "\nimport dataclasses\n\ndef deco(c):\n    c.extra = 7\n    return c\n"
    header += "\n@deco\nclass Decorated:\n    own = 1\n"
    header += "\n@dataclasses.dataclass\nclass Plain:\n    own: int = 1\n"
    body = cm("extra", "return Decorated.extra") + cm("own", "return Decorated.own")
    body += cm("plain", "return Plain.extra")
    it, cls = load(tmp_path, body, header=header)
    with pytest.raises(Unknown, match="class decorator"):
        ask(it, cls, "extra")
    assert ask(it, cls, "own") == 1
    with pytest.raises(Raised, match="AttributeError"):
        ask(it, cls, "plain")
