"""The safe evaluator (core/pyeval) on small invented trees: what it answers, and
the explicit unknowns (reason, file, line) for what it must not guess."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from evaluator import FILE, HEADER, MODULE, NODE, ask, cm, load
from runtime_trees import runtime_backend
from treebuilder import BACKENDS, dedent

from sphinxext_attn.knowledge.machine import Machine
from sphinxext_attn.pyeval import Interpreter, Raised, Unknown
from sphinxext_attn.pyeval.values import External
from sphinxext_attn.source.tree import SourceTree


def line_of(root: Path, text: str, rel: str = FILE) -> int:
    lines = (root / rel).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


EXPRESSIONS: list[tuple[str, Any]] = [
    (
        "(1 + 2 * 3, 7 // 2, -7 // 2, 7 % 3, 2 ** 10, 10 / 4, -5, ~5)",
        (7, 3, -4, 1, 1024, 2.5, -5, -6),
    ),
    ("(7 & 3, 7 | 8, 7 ^ 1, 1 << 3, 256 >> 2, 2 ** -1)", (3, 15, 6, 8, 64, 0.5)),
    ("(1 < 2 <= 2, 3 > 2 > 2, 1 == 1.0, 'a' != 'b')", (True, False, True, True)),
    ("(None is None, [] is not None, not 0, not [1])", (True, True, True, False)),
    ("(False and torch.cuda.is_available(), True or torch.cuda.x())", (False, True)),
    ("(0 or 'd', 3 and 4, 1 if [] else 2)", ("d", 4, 2)),
    (
        "('b' in 'abc', 3 in [1, 2], 2 in range(5), 'k' in {'k': 1}, 4 not in (4,))",
        (True, False, True, True, False),
    ),
    ("f'{1 + 1}-{\"x\"!r}-{7:03d}-{2.5:.2f}'", "2-'x'-007-2.50"),
    ("[i * 2 for i in range(5) if i % 2]", [2, 6]),
    ("{k: v for k, v in [(1, 2), (3, 4)]}", {1: 2, 3: 4}),
    ("({i % 3 for i in range(10)}, sum(i for i in range(4)))", ({0, 1, 2}, 6)),
    ("[(a, b) for a in 'ab' for b in (1, 2) if b > 1]", [("a", 2), ("b", 2)]),
    (
        "([1, 2, 3][::-1], 'abc'[1:], (1, 2) + (3,), [0] * 3, 'ab' * 2)",
        ([3, 2, 1], "bc", (1, 2, 3), [0, 0, 0], "abab"),
    ),
    ("(sorted([3, 1, 2], reverse=True), max([1, 5, 3], key=lambda v: -v))", ([3, 2, 1], 1)),
    ("(min(3, 1), any([]), all([]), abs(-3), isinstance(True, int))", (1, False, True, 3, True)),
    ("('a,b'.split(','), ' '.join(['x', 'y']), 'Ab'.lower())", (["a", "b"], "x y", "ab")),
    ("(list(zip([1, 2], 'ab')), list(enumerate('ab', 1)))", ([(1, "a"), (2, "b")],) * 2),
    ("((lambda a, b=2: a + b)(1), {**{'a': 1}, 'b': 2}, len({'a': 1}))", (3, {"a": 1, "b": 2}, 1)),
    ("(AttentionType.DECODER == 'decoder', 'encoder' == AttentionType.ENCODER)", (True, True)),
    ("AttentionType('encoder') is AttentionType.ENCODER", True),
    ("(AttentionType.DECODER.value, AttentionType['ENCODER'].name)", ("decoder", "ENCODER")),
    (
        "[m.name for m in AttentionType if m != 'decoder']",
        ["ENCODER", "ENCODER_ONLY", "ENCODER_DECODER"],
    ),
    (
        "(AttentionType.DECODER in ['decoder'], f'{AttentionType.DECODER}')",
        (True, "AttentionType.DECODER"),
    ),
    (
        "(Cap(9, 0) >= Cap(8, 0), Cap(8, 9) < Cap(9, 0), Cap(10, 0) > Cap(10, 0))",
        (True, True, False),
    ),
    (
        "(Cap(12, 1) <= Cap(12, 0), Cap(9, 0) == Cap(major=9, minor=0), Cap(9, 0) != Cap(9, 1))",
        (False, True, True),
    ),
    ("(Cap(9, 0) == (9, 0), Cap(10, 3).to_int(), Cap(9, 0).as_version_str())", (True, 103, "9.0")),
    ("(Cap(8, 6).major, Cap(8, 6)[1], tuple(Cap(7, 5)))", (8, 6, (7, 5))),
    ("(MultipleOf(16).base, MultipleOf(base=8).base)", (16, 8)),
    ("(isinstance(MultipleOf(16), MultipleOf), isinstance(16, MultipleOf))", (True, False)),
    ("[b.base if isinstance(b, MultipleOf) else b for b in [MultipleOf(16), 32]]", [16, 32]),
    ("(os.getenv('VLLM_PROBE_X', 'dflt'), os.getenv('VLLM_PROBE_Z'))", ("dflt", None)),
    ("os.environ.get('VLLM_PROBE_X', '0') == '1'", False),
    ("cls.__name__ + '.' + cls.get_name()", "MyBackend.MY"),
]


@pytest.fixture(scope="module")
def expressions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Interpreter, Any]:
    body = "@staticmethod\ndef get_name():\n    return 'MY'\n"
    for i, (expr, _) in enumerate(EXPRESSIONS):
        body += f"\n@classmethod\ndef e{i}(cls):\n    return {expr}\n"
    return load(tmp_path_factory.mktemp("expr"), body)


@pytest.mark.parametrize("i", range(len(EXPRESSIONS)), ids=[e[0][:40] for e in EXPRESSIONS])
def test_expression(expressions, i, monkeypatch):
    monkeypatch.setenv("VLLM_PROBE_X", "set in the environment")  # never read: vLLM's defaults
    it, cls = expressions
    assert ask(it, cls, f"e{i}") == EXPRESSIONS[i][1]


def test_if_return_and_loops(tmp_path):
    body = """
    @classmethod
    def f(cls, n):
        total = 0
        for i in range(10):
            if i == 3:
                continue
            if i == n:
                break
            total += i
        else:
            return -1
        if total > 10:
            return "big"
        elif total > 3:
            return "mid"
        return total
    """
    it, cls = load(tmp_path, dedent(body))
    assert [ask(it, cls, "f", n) for n in (1, 5, 7, 99)] == [0, "mid", "big", -1]


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


def test_logging_calls_are_skipped(tmp_path):
    body = cm(
        "f",
        "logger.warning_once('x %s', torch.cuda.get_device_properties(0))",
        "logger.info('y')",
        "return 1",
    )
    it, cls = load(tmp_path, body, header=HEADER + "logger = init_logger(__name__)\n")
    assert ask(it, cls, "f") == 1


def test_dcp_through_get_impl_cls_and_not_implemented(tmp_path):
    header = HEADER + "class Impl:\n    supports_dcp = True\n"
    it, cls = load(
        tmp_path, "@staticmethod\ndef get_impl_cls():\n    return Impl\n", header=header
    )
    assert ask(it, cls, "supports_dcp") is True
    it, cls = load(tmp_path / "b", "pass\n")  # the base's get_impl_cls raises NotImplementedError
    assert ask(it, cls, "supports_dcp") is False


CAP_BODY = """
@classmethod
def major(cls):
    return current_platform.get_device_capability().major

@classmethod
def f(cls, head_size):
    if current_platform.is_device_capability_family(100):
        return head_size <= 256
    return cls.major() >= 9 and head_size <= 128 and current_platform.is_cuda()
"""


def test_memoised_answers_do_not_mix_capabilities(tmp_path):
    it, cls = load(tmp_path, dedent(CAP_BODY))
    with pytest.raises(Unknown, match="compute capability"):
        ask(it, cls, "f", 192)
    caps = [(9, 0), (10, 0), (8, 0), (10, 3), (9, 0)]
    assert [ask(it, cls, "f", 192, capability=c) for c in caps] == [
        False, True, False, True, False,
    ]  # fmt: skip
    assert [ask(it, cls, "major", capability=c) for c in [(12, 1), (8, 6), (12, 1)]] == [12, 8, 12]
    with pytest.raises(Unknown, match="compute capability"):
        ask(it, cls, "f", 192)  # an answer memoised for a GPU is not an answer without one


def test_a_call_that_never_reads_the_gpu_is_remembered_for_every_gpu(tmp_path):
    """A call that did not read the device capability answers for every GPU (one
    memo entry); one whose path reads it is still remembered per GPU."""
    body = cm("g", "return x * 2", args="x") + cm(
        "h", "if x > 1:", "    return current_platform.get_device_capability().major", "return 0",
        args="x",
    )  # fmt: skip
    it, cls = load(tmp_path, body)
    g = it.getattr(cls, "g", NODE, "").func
    assert [ask(it, cls, "g", 3, capability=c) for c in [(9, 0), (10, 0), None]] == [6, 6, 6]
    assert len([k for k in it.call_memo.answers if k[0] is g]) == 1
    assert [ask(it, cls, "h", 0, capability=c) for c in [(9, 0), None]] == [0, 0]
    assert [ask(it, cls, "h", 2, capability=c) for c in [(9, 0), (10, 0), (9, 0)]] == [9, 10, 9]
    with pytest.raises(Unknown, match="compute capability"):
        ask(it, cls, "h", 2)


def test_flash_attention_versions_of_a_full_build_when_the_tree_lacks_the_module(tmp_path):
    """Releases before 0.17 ship no vllm_flash_attn source: the machine answers as
    a full build (FA2 from 8.0, FA3 on 9.x, FA4 on 9.x to 11.x), per GPU."""
    body = cm(
        "f",
        "from vllm.vllm_flash_attn.flash_attn_interface import is_fa_version_supported",
        "return [is_fa_version_supported(v) for v in (2, 3, 4)]",
    )
    it, cls = load(tmp_path, body)
    caps = [(7, 5), (8, 0), (9, 0), (10, 0), (12, 0)]
    assert [ask(it, cls, "f", capability=c) for c in caps] == [
        [False, False, False],
        [True, False, False],
        [True, True, True],
        [True, False, True],
        [True, False, False],
    ]
    with pytest.raises(Unknown, match="compute capability"):
        ask(it, cls, "f")


def test_module_and_class_values_do_not_mix_capabilities(tmp_path):
    header = HEADER + "MAJOR = current_platform.get_device_capability().major\n"
    body = "big = current_platform.get_device_capability().major\n\n" + cm(
        "f", "return MAJOR, cls.big"
    )
    it, cls = load(tmp_path, body, header=header)
    assert [ask(it, cls, "f", capability=c) for c in [(9, 0), (10, 0)]] == [(9, 9), (10, 10)]


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


SEMANTICS = [
    ("MultipleOf(16) == MultipleOf(16)", True, "dataclass instances compare by fields"),
    (
        "str(AttentionType.DECODER)",
        "AttentionType.DECODER",
        "str() of a str-enum member is its qualified name",
    ),
    ("{AttentionType.DECODER: 1}.get('decoder')", 1, "a str-enum member hashes like its value"),
    ("dict(a=1)", {"a": 1}, "dict() takes keyword arguments"),
    ("~True", -2, "~ on a bool inverts its int (and the host Python does not warn)"),
]


@pytest.mark.parametrize(("expr", "want", "why"), SEMANTICS, ids=[b[0] for b in SEMANTICS])
def test_semantics_as_in_python(tmp_path, expr, want, why):
    it, cls = load(tmp_path, f"@classmethod\ndef f(cls):\n    return {expr}\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the analysed code's operations warn nothing here
        assert ask(it, cls, "f") == want, why


def test_except_catches_a_tree_subclass_of_a_builtin_exception(tmp_path):
    header = HEADER + "class MyError(ValueError):\n    pass\n"
    body = cm("f", "try:", "    raise MyError('x')", "except ValueError:", "    return 'caught'")
    it, cls = load(tmp_path, body, header=header)
    assert ask(it, cls, "f") == "caught"


def test_raised_carries_kind_and_message(tmp_path):
    body = cm("f", "if x:", "    raise ValueError(f'bad {x}')", "return 1 // x", args="x")
    it, cls = load(tmp_path, body)
    with pytest.raises(Raised) as exc:
        ask(it, cls, "f", 3)
    assert (exc.value.kind, exc.value.message) == ("ValueError", "bad 3")
    with pytest.raises(Raised) as exc:
        ask(it, cls, "f", 0)
    assert exc.value.kind == "ZeroDivisionError"


UNKNOWNS = [  # (statement, reason, the line the unknown points at)
    ("p = torch.cuda.get_device_properties(0)", "torch.cuda.get_device_properties", "p = torch"),
    ("while cls.x:\n        pass", "While", "while cls.x"),
    ("del cls.x", "Delete", "del cls.x"),  # a call's own locals are deleted; not this
    ("if torch.version.hip:\n        return 1", "torch.version.hip", "if torch.version"),
    (
        "import flashinfer\n    if flashinfer.ok:\n        return 1",
        "flashinfer.ok",
        "if flashinfer",
    ),
    ("return open('/etc/hostname').read()", "open", "return open"),
    ("return exec('1')", "exec", "return exec"),
    (
        "return (9, 0) < torch.cuda.get_device_capability()",
        "torch.cuda.get_device_capability",
        "return (9",
    ),
]


def test_del_of_a_calls_own_locals_unbinds_them(tmp_path):
    """``del (a, b)`` of a function's own arguments (vLLM's checks del those they do
    not use): evaluated; reading one afterwards raises as Python does."""
    from sphinxext_attn.pyeval import Raised

    body = "@classmethod\ndef f(cls, a=1, b=2):\n    del (a, b)\n    return 3\n"
    body += "\n@classmethod\ndef g(cls, a=1):\n    del a\n    return a\n"
    it, cls = load(tmp_path, body)
    assert ask(it, cls, "f", capability=(9, 0)) == 3
    with pytest.raises(Raised) as exc:
        ask(it, cls, "g", capability=(9, 0))
    assert exc.value.kind == "UnboundLocalError"


@pytest.mark.parametrize(("stmt", "reason", "where"), UNKNOWNS, ids=[u[1] for u in UNKNOWNS])
def test_unknown_names_reason_file_and_line(tmp_path, stmt, reason, where):
    body = f"x = 1\n\n@classmethod\ndef f(cls):\n    y = 0\n    {stmt}\n    return 2\n"
    it, cls = load(tmp_path, body)
    with pytest.raises(Unknown) as exc:
        ask(it, cls, "f", capability=(9, 0))
    assert reason in exc.value.reason
    assert (exc.value.path, exc.value.line) == (FILE, line_of(tmp_path, where))


def test_asking_each_value_raised_unsupported_and_missing_methods(tmp_path):
    from sphinxext_attn.runtime.questions import Asker

    body = cm(
        "supports_head_size", "if h > 128:", "    raise ValueError(h)", "return True", args="h"
    )
    body += cm("supports_dtype", "return True", args="dtype, extra")
    it, cls = load(tmp_path, body)
    ask = Asker(it, cls)
    # a value the method raises for is not accepted: vLLM asking it would fail
    assert ask.ask_each("supports_head_size", [64, 128, 256], ["64", "128", "256"]).value == [
        "64",
        "128",
    ]
    # a signature that does not take the one argument vLLM passes answers nothing
    answer = ask.ask_each("supports_dtype", [1, 2], ["a", "b"])
    assert answer.unknown is not None and "argument" in answer.unknown.reason
    # nor does a method the class does not have (not an empty list)
    answer = ask.ask_each("supports_nothing", [1, 2], ["a", "b"])
    assert answer.value is None and "AttributeError" in answer.raised


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


def test_str_enum_and_dataclass_values_behave_as_in_python(tmp_path):
    header = (
        HEADER
        + "from dataclasses import dataclass\n\n\n@dataclass(eq=False)\nclass Ident:\n    x: int\n"
    )
    body = cm(
        "f",
        "d = {AttentionType.DECODER: 1, 'encoder': 2}",
        "s = {AttentionType.DECODER, 'decoder'}",
        "return (d['decoder'], d[AttentionType.ENCODER], len(s), Ident(1) == Ident(1),",
        "        MultipleOf(16) != MultipleOf(32), f'{AttentionType.DECODER}')",
    )
    it, cls = load(tmp_path, body, header=header)
    assert ask(it, cls, "f") == (1, 2, 1, False, True, "AttentionType.DECODER")


def test_math_domain_errors_are_raised(tmp_path):
    body = cm("f", "import math", "return math.sqrt(x)", args="x")
    it, cls = load(tmp_path, body)
    assert ask(it, cls, "f", 4) == 2.0
    with pytest.raises(Raised) as exc:
        ask(it, cls, "f", -1)
    assert exc.value.kind == "ValueError"


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


@pytest.mark.parametrize(
    "binding",
    [
        "for size in (64, 256):\n    pass\n",
        "del size\n",
        "match 1:\n    case 1:\n        size = 256\n",
        "_x = (size := 256)\n",
        "with open('f') as size:\n    pass\n",
        "while False:\n    size = 1\n",
    ],
)
def test_class_body_bindings_not_evaluated_are_unknown_never_stale(tmp_path, binding):
    """A name a loop, ``del``, ``match``, ``:=`` or ``with ... as`` may rebind is
    unknown there, not the value an earlier line gave; other names are unaffected."""
    body = "size = 128\nother = 1\n" + binding + "\n" + cm("f", "return cls.size")
    body += cm("g", "return cls.other")
    it, cls = load(tmp_path, body)
    with pytest.raises(Unknown):
        ask(it, cls, "f")
    assert ask(it, cls, "g") == 1


#: a class larger than LAZY_CHARS (source/chunks.py) with a ``:=`` in a method
BIG_CLASS = (
    "class Big:\n    def g(self):\n        if (LIMIT := 3):\n            return LIMIT\n"
    + "".join(f"    def m{i}(self):\n        return {i}\n" for i in range(300))
    + "\n"
)


@pytest.mark.parametrize(
    ("header", "want"),
    [
        # a ``:=`` in a lambda binds in the lambda: the module's LIMIT stays 128
        ("LIMIT = 128\nHOOKS = {'a': lambda: (LIMIT := 256) > 0}\n", 128),
        # one in a comprehension binds in the module (as in CPython): unknown
        ("LIMIT = 128\nFOUND = [(LIMIT := x) for x in (256,)]\n", Unknown),
        # a method's binds in the method; a class-level one in the class
        (f"LIMIT = 128\n{BIG_CLASS}", 128),
        ("LIMIT = 128\nclass K:\n    x = (LIMIT := 3)\n", 128),
        # decorators, bases and defaults run where the statement stands
        (
            f"LIMIT = 128\ndef reg(x):\n    return lambda c: c\n@reg(LIMIT := 256)\n{BIG_CLASS}",
            Unknown,
        ),
        ("LIMIT = 128\nclass K(metaclass=(LIMIT := type)):\n    pass\n", Unknown),
        ("LIMIT = 128\ndef h(a=(LIMIT := 5)):\n    return a\n", Unknown),
    ],
)
def test_walrus_binds_where_python_binds_it(tmp_path, header, want):
    it, cls = load(tmp_path, cm("f", "return LIMIT"), header=HEADER + header)
    if want is Unknown:
        with pytest.raises(Unknown, match="not evaluated"):
            ask(it, cls, "f")
    else:
        assert ask(it, cls, "f") == want


def test_a_class_whose_walrus_sits_in_its_body_is_not_parsed_to_index_the_module(tmp_path):
    """Only its header can bind a module name: the class stays lazy (the members a
    question reads are parsed, not the whole class)."""
    it, cls = load(tmp_path, cm("f", "return Big().g()"), header=HEADER + BIG_CLASS)
    module = it.module(MODULE)
    (piece,) = [c for c in module.chunks if c.text.startswith("class Big")]
    assert not piece.parsed
    assert ask(it, cls, "f") == 3
    assert not piece.parsed


def test_module_level_loop_binding_is_unknown(tmp_path):
    header = HEADER + "LIMIT = 128\nfor LIMIT in (256,):\n    pass\n"
    it, cls = load(tmp_path, cm("f", "return LIMIT"), header=header)
    with pytest.raises(Unknown, match="not evaluated"):
        ask(it, cls, "f")


def test_a_default_is_one_object_for_every_call(tmp_path):
    """As at ``def`` time: a list default keeps what earlier calls appended (so a
    call that reads it is never answered from the call memo)."""
    body = cm("g", "v.append(1)", "return len(v)", args="v=[]")
    body += cm(
        "f",
        "def inner(v=[]):",
        "    v.append(1)",
        "    return len(v)",
        "inner()",
        "return inner(), cls.g(), cls.g(), cls.g([])",
    )
    it, cls = load(tmp_path, body)
    assert ask(it, cls, "f") == (2, 1, 2, 1)


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


def test_enum_members_with_a_leading_underscore_are_members(tmp_path):
    """``_310P`` is a member as Python has it (issue 35); dunders, ``_sunder_`` and
    private names are not. The same question is put to CPython."""
    prelude = (
        "import enum\n\n\nclass Soc(enum.Enum):\n    _310P = 1\n    A2 = 2\n"
        "    _ignore_ = []\n    __private = 3\n"
    )
    body = "return ([m.name for m in Soc], Soc._310P.value, Soc['_310P'].name)"
    header = HEADER + "\n" + prelude
    it, cls = load(tmp_path, cm("f", *body.splitlines()), header=header)
    want = (["_310P", "A2"], 1, "_310P")
    namespace: dict[str, Any] = {}
    exec(compile(prelude + "\ndef _f():\n    " + body + "\n", "<case>", "exec"), namespace)
    assert namespace["_f"]() == want
    assert ask(it, cls, "f") == want


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
