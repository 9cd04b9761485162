"""The machine the answers are for: a CUDA build of vLLM with every kernel present.

What analysed code asks of the world outside the tree is answered here, and
nowhere else, the way vLLM's own answers were collected (the platform is
CUDA; no environment variable is set (``os.environ`` is empty), so vLLM's
``VLLM_*`` defaults apply; no engine
config is current; compiled kernels and optional packages import; the device
capability is the one the question is about; the toolchain vLLM looks for on
PATH, nvcc and ninja, is there; FlashAttention versions are those its build
supports on that GPU). Anything else from outside the
tree (a call into torch, a kernel) is :class:`Unknown`.

It is the evaluator's :class:`~sphinxext_attn.pyeval.world.World` for vLLM: plain
Python's answers come from there, vLLM's are added here
(``Interpreter(tree, Machine(environment))``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from sphinxext_attn.knowledge import devices, probes
from sphinxext_attn.knowledge.engine_config import (
    CURRENT_CONFIG,
    CURRENT_CONFIG_OR_NONE,
    ConfigDefaults,
    config_attr,
)
from sphinxext_attn.model.environment import (
    DEFAULT_ROCM_ARCH,
    REFERENCE,
    Environment,
    literal_of,
    truth_of,
)
from sphinxext_attn.pyeval import (
    MISSING,
    NODE,
    External,
    Foreign,
    Instance,
    PyFunction,
    Raised,
    Unknown,
    Value,
    World,
)
from sphinxext_attn.vocab.paths import (
    CUDA_PLATFORM_FILE,
    CUDA_PLATFORM_MODULE,
    FA_INTERFACE_MODULE,
    PLATFORM_INTERFACE_FILE,
    PLATFORM_INTERFACE_MODULE,
    PLATFORM_PACKAGE,
)

if TYPE_CHECKING:
    from sphinxext_attn.pyeval import Interpreter, ModuleScope

#: FlashAttention version -> the GPU major versions a full build runs it on (FA2: SM 8.0 on).
FA_MAJORS = {2: range(8, 100), 3: (9,), 4: (9, 10, 11)}

#: torch's dtype aliases, so ``torch.half`` and ``torch.float16`` are one value.
TORCH_ALIASES = {
    "torch.half": "torch.float16",
    "torch.float": "torch.float32",
    "torch.double": "torch.float64",
    "torch.bfloat16": "torch.bfloat16",
}

#: Calls that read one environment variable: ``os.environ.pop`` and ``setdefault``
#: change the environment too, which only the analysed process would see.
ENVIRON_READS = frozenset(
    {"os.getenv", "os.environ.get", "os.environ.pop", "os.environ.setdefault"}
)


class Machine(World):
    """Answers for everything outside the tree."""

    def __init__(self, environment: Environment = REFERENCE) -> None:
        self.environment = environment
        self._platform: Value = None
        self._installed: dict[str, bool] = {}
        #: facts read that nobody set and the machine only guesses (see selection.settled)
        self.guessed: set[str] = set()
        #: whether vLLM's default engine config counts as current where the code asks
        #: for one that may be missing (see :meth:`config_current`)
        self._config_current = False

    # -- names -------------------------------------------------------------------
    def module_attr(self, interp: Interpreter, dotted: str, name: str) -> Value:
        if dotted == PLATFORM_PACKAGE and name == "current_platform":
            return self.platform(interp)
        return MISSING

    def absent_module_attr(
        self, interp: Interpreter, mod: ModuleScope, name: str, node: ast.AST
    ) -> Value:
        if mod.dotted.split(".", 1)[0] in interp.tree.plugin_roots and name.startswith("_"):
            # a plugin's private module its build writes (vllm-ascend's SoC version)
            raise Unknown(
                f"{mod.dotted}.{name} is not in the plugin's folder (written when it is built)",
                mod.path,
                getattr(node, "lineno", 0),
            )
        return super().absent_module_attr(interp, mod, name, node)

    def platform(self, interp: Interpreter) -> Value:
        """``current_platform``: an instance of the tree's class for the machine's
        platform (CUDA: the platform class of ``vllm/platforms/cuda.py``; another:
        the class its detection plugin names, see :mod:`.devices`)."""
        if self._platform is None:
            if self.environment.platform != "cuda":
                self._platform = devices.platform_instance(interp, self.environment.platform)
                return self._platform
            module = interp.module(CUDA_PLATFORM_MODULE)
            if module is None:
                raise Unknown("no CUDA platform module in the tree", CUDA_PLATFORM_FILE)
            for stmt in module.class_nodes():
                if any(
                    isinstance(s, ast.Assign | ast.AnnAssign) and "_enum" in _assigned(s)
                    for s in stmt.body
                ):
                    cls = module.lookup(stmt.name, interp, stmt)
                    self._platform = Instance(cls)
                    break
            else:
                raise Unknown(f"no platform class in {CUDA_PLATFORM_FILE}", module.path)
        return self._platform

    @property
    def arch(self) -> str:
        """The ROCm GPU amdsmi reports (``--arch``; gfx942 when none is named)."""
        return self.environment.arch or DEFAULT_ROCM_ARCH

    def external_attr(self, interp: Interpreter, obj: External, name: str) -> Value:
        qualname = f"{obj.qualname}.{name}"
        if qualname == "requests.Response.status_code":
            return 200
        if qualname in TORCH_ALIASES:
            return External(TORCH_ALIASES[qualname])
        return super().external_attr(interp, obj, name)

    def external_truth(self, value: External, node: ast.AST, path: str) -> bool:
        if value.qualname == "importlib.machinery.ModuleSpec":
            return True
        return super().external_truth(value, node, path)

    def external_subscript(self, interp: Interpreter, value: External, index: Value) -> Value:
        if value.qualname == "os.environ":
            return self.environ_item(interp, index)
        return super().external_subscript(interp, value, index)

    def compare(
        self, interp: Interpreter, op: ast.cmpop, left: Value, right: Value
    ) -> bool | None:
        """A feature probe of a dependency's signature; ``name in os.environ``."""
        probed = probes.compare(self, interp, op, left, right)
        if probed is not None:
            return probed
        if isinstance(op, ast.In | ast.NotIn) and _is_environ(right):
            return self.environ_has(interp, left) == isinstance(op, ast.In)
        return None

    def foreign_attr(self, interp: Interpreter, obj: Foreign, name: str, path: str) -> Value:
        if isinstance(obj, ConfigDefaults):
            # a field of the engine config: as set (``--option``), else its declared default
            return config_attr(self.environment, interp, obj, name)
        return super().foreign_attr(interp, obj, name, path)

    def call_external(
        self, interp: Interpreter, func: External, args: list[Value], kwargs: dict[str, Value]
    ) -> Value:
        answer = super().call_external(interp, func, args, kwargs)
        if answer is not MISSING:
            return answer
        name = func.qualname
        if name in ENVIRON_READS and args and isinstance(args[0], str):
            return self.getenv(
                interp, args[0], args[1] if len(args) > 1 else kwargs.get("default")
            )
        if name == "shutil.which" and args and isinstance(args[0], str):
            # a full build: the toolchain vLLM looks for on PATH (nvcc, ninja) is there
            tool = args[0].rstrip("/").rsplit("/", 1)[-1]
            if not self.fact_truth(interp, f"which.{tool}", True):
                return None
            return args[0] if args[0].startswith("/") else f"/usr/local/bin/{tool}"
        if name in ("os.path.exists", "os.path.isfile", "os.path.isdir", "os.path.dirname"):
            return True if name != "os.path.dirname" else ""
        if name == "importlib.import_module" and args and isinstance(args[0], str):
            # (a module of the tree is the world's answer above)
            if args[0].split(".")[0] != "vllm":
                return External(args[0])  # packages outside the tree import
            raise Raised("ModuleNotFoundError", f"No module named {args[0]!r}")
        if name == "inspect.signature":
            return probes.signature(self, interp, args, kwargs)
        if name == f"{FA_INTERFACE_MODULE}.is_fa_version_supported" and len(args) == 1:
            return self.fa_version_supported(interp, args[0], func)
        if name.startswith("amdsmi.") and self.environment.platform == "rocm":
            answer = devices.amdsmi_call(interp, name, self.arch)
            if answer is not Ellipsis:
                return answer
        if (
            not args
            and not kwargs
            and (self.environment.platform != "cuda" or name in self.environment.assume)
        ):  # on CUDA only as assumed: the recorded machine's CPU is not known
            probed = self.probe(interp, name)
            if probed is not MISSING:
                return probed
        if name == "importlib.util.find_spec" and args and isinstance(args[0], str):
            return (
                External("importlib.machinery.ModuleSpec")
                if self.installed(interp, args[0])
                else None
            )
        if name.startswith(("requests.", "urllib.request.", "socket.")):
            if not self.fact_truth(interp, "network", False):
                raise Raised("ConnectionError", "no network (assume network=true to change)")
            return External("requests.Response")
        return MISSING

    def probe(self, interp: Interpreter, name: str) -> Value:
        """A question to the hardware (``platform.machine()``, ``torch.cpu._is_*_supported()``)
        on a platform whose reference machine is not the recorded CUDA one: as assumed;
        the CPU type of the reference machine (x86_64); a yes/no probe nobody set is
        guessed false and noted, so a decision resting on it is made both ways."""
        if name == "platform.machine":
            value = self.environment.assume.get(name, "x86_64")
            interp.note_fact(name, value)
            return value
        if not devices.HARDWARE_PROBE.match(name):
            return MISSING
        if name not in self.environment.assume:
            self.guessed.add(name)
        return self.fact_truth(interp, name, False)

    def getenv(self, interp: Interpreter, name: str, default: Value) -> Value:
        """``os.getenv(name, default)``: the variable as set, else the default."""
        value = self.environment.env.get(name)
        interp.note_fact(name, "unset" if value is None else value)
        return default if value is None else value

    def environ_item(self, interp: Interpreter, name: Value) -> Value:
        """``os.environ[name]``: the variable as set, else a KeyError (a read, as
        ``os.getenv`` is: the answer rests on it)."""
        if not isinstance(name, str):
            raise Raised("TypeError", "str expected, not " + type(name).__name__)
        value = self.getenv(interp, name, None)
        if value is None:
            raise Raised("KeyError", repr(name))
        return value

    def environ_has(self, interp: Interpreter, name: Value) -> bool:
        """``name in os.environ``: whether the variable is set (a read)."""
        return isinstance(name, str) and self.getenv(interp, name, None) is not None

    def fact_truth(self, interp: Interpreter, name: str, default: bool) -> bool:
        """A yes/no fact about the machine: as assumed, else the reference machine's."""
        text = self.environment.assume.get(name)
        truth = default if text is None else truth_of(text)
        if truth is None:
            raise Unknown(f"assumption {name}={text!r} is not true or false")
        interp.note_fact(name, "true" if truth else "false")
        return truth

    def check_built_module(self, interp: Interpreter, dotted: str) -> None:
        """An import of a module of the package that the source tree does not hold
        (built with the wheel: ``vllm.vllm_flash_attn.cute``) succeeds on a full build;
        ``installed.MODULE=false`` (the first module missing) makes it fail as Python's
        import does."""
        parts = dotted.split(".")
        if not any(f.startswith(f"installed.{parts[0]}.") for f in self.environment.assume):
            return  # a full build (nothing is asked of the tree then)
        missing = next(
            (".".join(parts[:n]) for n in range(2, len(parts) + 1) if not _held(interp, parts, n)),
            None,
        )
        if missing is None or f"installed.{missing}" not in self.environment.assume:
            return
        if not self.fact_truth(interp, f"installed.{missing}", True):
            raise Raised("ModuleNotFoundError", f"No module named {missing!r}", exact=True)

    def installed(self, interp: Interpreter, package: str) -> bool:
        """A package is installed when backend code imports it (it could not load
        otherwise); one that is only probed for (``find_spec``) is not. An
        ``installed.PACKAGE`` assumption says otherwise."""
        top = package.split(".")[0]
        if top == "vllm":
            return interp.module(package) is not None
        fact = f"installed.{top}"
        if fact in self.environment.assume:
            return self.fact_truth(interp, fact, False)
        if self.environment.platform != "cuda":  # the reference machine is a CUDA one
            self.guessed.add(fact)
        return self.fact_truth(interp, fact, self._imported(interp, top))

    def _imported(self, interp: Interpreter, top: str) -> bool:
        if top not in self._installed:
            pattern = rf"^\s*(?:from|import)\s+{re.escape(top)}\b"
            self._installed[top] = interp.tree.read_text_matches(top, pattern)
        return self._installed[top]

    # -- functions of the tree that stand for the machine --------------------------
    def function_hook(
        self, interp: Interpreter, func: PyFunction, args: list[Value], kwargs: dict[str, Value]
    ) -> Value:
        name = func.name
        assumed = self.environment.assume.get(name)
        if assumed is not None:
            interp.note_fact(name, assumed)
            return literal_of(assumed)
        dotted = func.module.dotted
        if (
            name == "get_device_capability"
            and dotted.startswith(PLATFORM_PACKAGE)
            and self.environment.platform == "cuda"
        ):  # elsewhere the platform's own code derives it (ROCm: from the arch)
            return self.capability(interp, func)
        if name == CURRENT_CONFIG_OR_NONE:
            current = self.environment.options or self._config_current
            if current and func.module.has("VllmConfig"):
                return ConfigDefaults(func.module.lookup("VllmConfig", interp, func.node))
            return None  # no engine config is current while the docs build
        if name == CURRENT_CONFIG and func.module.has("VllmConfig"):
            # vLLM's answers were collected under its default VllmConfig()
            return ConfigDefaults(func.module.lookup("VllmConfig", interp, func.node))
        return MISSING

    def fa_version_supported(self, interp: Interpreter, version: Value, func: External) -> bool:
        """``is_fa_version_supported(v)`` of a full build, for a tree without the
        module's source: what the module says where releases ship it (FA2 from
        SM 8.0, FA3 on 9.x, FA4 on 9.x, 10.x and 11.x), for the GPU asked about."""
        major, _ = self.gpu(interp, func.qualname)
        if type(version) is not int or version not in FA_MAJORS:
            raise Raised("ValueError", f"Unsupported FA version: {version}")
        return major in FA_MAJORS[version]

    @staticmethod
    def gpu(
        interp: Interpreter, asker: str = "", path: str = "", line: int = 0
    ) -> tuple[int, int]:
        """The capability of the GPU the question is about (read: the answer is
        per GPU); :class:`Unknown` when the question names none."""
        interp.read_gpu()
        if interp.capability is None:
            raise Unknown(f"{asker} depends on the GPU's compute capability".lstrip(), path, line)
        return interp.capability

    @contextmanager
    def config_current(self) -> Iterator[None]:
        """Inside, vLLM's default engine config is current also where the code asks
        ``get_current_vllm_config_or_none()`` (None while the docs build): so an
        answer that holds under the defaults names the fields it reads."""
        saved, self._config_current = self._config_current, True
        try:
            yield
        finally:
            self._config_current = saved

    def capability(self, interp: Interpreter, func: PyFunction) -> Value:
        capability = self.gpu(interp, path=func.path, line=func.node.lineno)
        module = interp.module(PLATFORM_INTERFACE_MODULE)
        if module is None:
            raise Unknown("no DeviceCapability class in the tree", func.path)
        cls = module.lookup("DeviceCapability", interp, func.node)
        return interp.call(cls, list(capability), {}, func.node, func.path)


def machine_of(interp: Interpreter) -> Machine:
    """The vLLM machine an interpreter evaluates for (its world)."""
    world = interp.world
    if not isinstance(world, Machine):
        raise TypeError(f"the interpreter's world is a {type(world).__name__}, not vLLM's machine")
    return world


def capability_class(interp: Interpreter) -> Value:
    """The tree's ``DeviceCapability`` class."""
    module = interp.module(PLATFORM_INTERFACE_MODULE)
    if module is None:
        raise Unknown(f"no {PLATFORM_INTERFACE_FILE} in the tree", PLATFORM_INTERFACE_FILE)
    return module.lookup("DeviceCapability", interp, NODE)


def _is_environ(value: Value) -> bool:
    """``os.environ``: its reads are facts the answer rests on (as ``os.getenv``'s)."""
    return isinstance(value, External) and value.qualname == "os.environ"


def _assigned(stmt: ast.Assign | ast.AnnAssign) -> list[str]:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    return [t.id for t in targets if isinstance(t, ast.Name)]


def _held(interp: Interpreter, parts: list[str], n: int) -> bool:
    """Whether the tree holds the module (or package) of the first ``n`` parts."""
    return interp.module(".".join(parts[:n])) is not None
