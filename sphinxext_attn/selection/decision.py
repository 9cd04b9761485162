"""Which backend vLLM picks for one configuration, and why not the others.

The question is put the way vLLM puts it: the platform's own
``get_valid_backends`` is evaluated with an ``AttentionSelectorConfig`` built
from the configuration, so the priority list, each backend's
``validate_configuration`` and the reasons are vLLM's code and words.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from sphinxext_attn.knowledge.machine import capability_class, machine_of
from sphinxext_attn.model.selection import (
    ENGINE_FIELDS,
    LAYER_FIELDS,
    OPTION_FIELDS,
    Config,
    Decision,
)
from sphinxext_attn.pyeval import (
    MISSING,
    NODE,
    STEPS_PER_DECISION,
    Bound,
    EnumMember,
    External,
    GpuInstance,
    Instance,
    Interpreter,
    PyClass,
    Raised,
    Unknown,
)
from sphinxext_attn.selection.answers import param_names, read_valid_backends
from sphinxext_attn.selection.platform_rules import decide_by_rule
from sphinxext_attn.selection.reason_sources import ReasonLocator
from sphinxext_attn.selection.requested import decide_requested
from sphinxext_attn.selection.settled import settle
from sphinxext_attn.vocab.names import ATTENTION_TYPE_ENUM, DTYPE_NAMES
from sphinxext_attn.vocab.paths import ENVS_MODULE, SELECTOR_MODULES

#: Selector config fields vLLM's selector fills from ``vllm.envs`` (the variable).
ENV_FIELDS: dict[str, str] = {"use_batch_invariant": "VLLM_BATCH_INVARIANT"}
#: Fields of a configuration that are no argument of the selector config's class.
NOT_CONFIG_FIELDS = frozenset({"capability", "num_heads", "selected_backend"})


class Selector:
    """Answers selection questions on one tree, sharing one evaluator."""

    def __init__(self, interp: Interpreter) -> None:
        self.interp = interp
        self._config_cls: PyClass | None = None
        self._locator: ReasonLocator | None = None
        #: the tree's selector config per configuration, and DeviceCapability per GPU
        #: (the selector's table asks each point of its grid for several backends;
        #: both are named tuples, never changed)
        self._configs: dict[tuple[Any, ...], Instance] = {}
        #: by the fields a selector config holds, those whose build read nothing
        self._shared_configs: dict[tuple[Any, ...], Instance] = {}
        self._capabilities: dict[tuple[int, int], Any] = {}
        #: the DeviceCapability argument is a :class:`GpuInstance` (looking at it reads
        #: the GPU): set by the selector's table, which shares answers across GPUs
        self.gpu_argument_read = False
        self._platform_gpu: tuple[int, int] | None = None
        #: the platform's ``get_valid_backends`` (by the class writes it was found at)
        #: and whether it takes ``num_heads``
        self._valid_backends: tuple[int, Any, bool] | None = None
        #: the same tree on machines where a guessed fact is set (see settled)
        self.siblings: dict[str, Selector] = {}
        interp.lenient_functions = frozenset({"validate_configuration"})

    def _selector_config_class(self) -> PyClass:
        if self._config_cls is None:
            for dotted in SELECTOR_MODULES:
                module = self.interp.module(dotted)
                if module is not None and module.has("AttentionSelectorConfig"):
                    found = module.lookup("AttentionSelectorConfig", self.interp, NODE)
                    if not isinstance(found, PyClass):
                        raise Unknown("AttentionSelectorConfig is not a class", module.path)
                    self._config_cls = found
                    break
            else:
                raise Unknown(f"no AttentionSelectorConfig in {' or '.join(SELECTOR_MODULES)}")
        return self._config_cls

    def _attn_type(self, name: str) -> Any:
        config_cls = self._selector_config_class()
        module = config_cls.module
        enum = (
            module.lookup(ATTENTION_TYPE_ENUM, self.interp, NODE)
            if module.has(ATTENTION_TYPE_ENUM)
            else None
        )
        if isinstance(enum, PyClass):
            member = self.interp.class_own_attr(enum, name.upper())
            if isinstance(member, EnumMember):
                return member
        return name.lower()

    def attn_type_value(self, name: str) -> Any:
        """The tree's ``AttentionType`` member (or text) for ``name``."""
        return self._attn_type(name)

    def build_config(self, config: Config) -> Instance:
        key = config.key()
        found = self._configs.get(key)
        if found is None:
            found = self._configs[key] = self._config_for(config)
        return found

    def _config_for(self, config: Config) -> Instance:
        """The selector config of ``config``, one for every configuration that differs
        only in what building it does not read (the GPU, unless the build read it;
        the head count, no field of it), when the build reads no machine fact."""
        if self.config_reads_environment:
            return self._build_config(config)
        fields = tuple(v for k, v in vars(config).items() if k not in NOT_CONFIG_FIELDS)
        found = self._shared_configs.get(fields)
        if found is None:
            with self.interp.question(steps=None) as question:
                found = self._build_config(config)
            if not question.read:  # neither the GPU nor a fact
                self._shared_configs[fields] = found
        return found

    def _build_config(self, config: Config) -> Instance:
        interp = self.interp
        cls = self._selector_config_class()
        fields = [f.name for f in interp.dataclass_fields(cls) or []]
        values = {
            "head_size": config.head_size,
            "dtype": External(DTYPE_NAMES.get(config.dtype.lower(), f"torch.{config.dtype}")),
            "kv_cache_dtype": config.kv_cache_dtype,
            "block_size": config.block_size,
            "use_mla": config.use_mla,
            "has_sink": config.has_sink,
            "use_sparse": config.use_sparse,
            "use_mm_prefix": config.use_mm_prefix,
            "attn_type": self._attn_type(config.attn_type),
            "use_non_causal": config.use_non_causal,
            "use_kv_connector": config.use_kv_connector,
        }
        kwargs = {k: v for k, v in values.items() if k in fields}
        kwargs.update(self._from_environment(fields))
        made = interp.call(cls, [], kwargs, NODE, cls.path)
        if not isinstance(made, Instance):  # a class with a ``__new__`` of its own
            raise Unknown("AttentionSelectorConfig(...) is not an instance", cls.path)
        return made

    @property
    def config_reads_environment(self) -> bool:
        """Whether building a selector config reads ``vllm.envs`` (a variable of
        :data:`ENV_FIELDS` is set): the first build of a configuration then reads
        machine facts, which the question that builds it records."""
        return any(v in machine_of(self.interp).environment.env for v in ENV_FIELDS.values())

    def _from_environment(self, fields: list[str]) -> dict[str, Any]:
        """Fields vLLM's selector fills from an environment variable, when the reader
        set it (``use_batch_invariant=envs.VLLM_BATCH_INVARIANT``: XPU's rules read
        it), read as the tree's ``vllm/envs.py`` reads it; unset, the default stays."""
        set_vars = machine_of(self.interp).environment.env
        out: dict[str, Any] = {}
        for field_name, variable in ENV_FIELDS.items():
            if field_name in fields and variable in set_vars:
                module = self.interp.module(ENVS_MODULE)
                if module is not None:
                    out[field_name] = self.interp.module_attr(module, variable, NODE)
        return out

    def explain(self, decision: Decision) -> Decision:
        """Add where each reason is stated (file:line) to a decision."""
        if self._locator is None:
            self._locator = ReasonLocator(self.interp)
        for name, reasons in decision.rejected.items():
            found = [self._locator.locate(name, r) for r in reasons]
            decision.sources[name] = [str(loc) if loc else "" for loc in found]
        return decision

    def gpu(self, config: Config) -> tuple[int, int]:
        """The GPU's capability: ``config``'s on CUDA; elsewhere what the platform's
        own ``get_device_capability`` derives (ROCm: from the arch amdsmi reports)."""
        if machine_of(self.interp).environment.platform == "cuda":
            return config.capability_tuple
        if self._platform_gpu is None:
            interp = self.interp
            platform = machine_of(interp).platform(interp)
            method = interp.getattr(platform, "get_device_capability", NODE, "")
            found = interp.call(method, [], {}, NODE, "")
            fields = getattr(found, "fields", {})
            self._platform_gpu = (
                (fields["major"], fields["minor"])
                if type(fields.get("major")) is int and type(fields.get("minor")) is int
                else config.capability_tuple  # none (XPU, CPU): the question's own
            )
        return self._platform_gpu

    def decide(self, config: Config) -> Decision:
        """vLLM's decision; where it rests on a fact the reader did not set and the
        machine only guesses (is aiter installed?), each value's decision, and a
        conditional one when they differ (:mod:`.settled`)."""
        return settle(self, config, self.decide_here(config))

    @contextmanager
    def model(self, config: Config) -> Iterator[None]:
        """The machine with the engine options ``config`` sets (:data:`ENGINE_FIELDS`:
        the model's attention type, as ``--option model_config.attn_type=...``), for
        one question."""
        machine = machine_of(self.interp)
        wanted = {o: getattr(config, f) for f, o in ENGINE_FIELDS.items()}
        wanted = {o: v for o, v in wanted.items() if v is not None}
        if not wanted:
            yield
            return
        saved = machine.environment
        options = {**saved.options, **wanted}
        machine.environment = replace(saved, options=options)
        try:
            yield
        finally:
            machine.environment = saved

    def decide_here(self, config: Config) -> Decision:
        interp = self.interp
        try:
            with (
                self.model(config),
                interp.question(capability=config.capability_tuple, steps=STEPS_PER_DECISION) as q,
            ):
                q.capability = self.gpu(config)
                decision = self._decide(config)
                decision.assumptions = q.assumptions or decision.assumptions
                decision.make_conditional()
                return decision
        except Unknown as exc:
            return Decision(None, [], unknown={"*": str(exc)}, error=f"not evaluated: {exc}")
        except Raised as exc:
            return Decision(None, [], error=f"{exc.kind}: {exc.message}")

    def _decide(self, config: Config) -> Decision:
        if config.selected_backend is not None:
            return decide_requested(self, config)
        return self.decide_automatically(config)

    def decide_automatically(self, config: Config) -> Decision:
        """vLLM's choice with no backend asked for (in the question under way)."""
        interp = self.interp
        platform = machine_of(interp).platform(interp)
        if isinstance(platform, Instance) and (
            interp.class_attr(platform.cls, "get_valid_backends")[0] is MISSING
        ):  # a platform without a priority list decides in get_attn_backend_cls
            return decide_by_rule(self, config, platform)
        method, kwargs = self.valid_backends_call(config)
        result = self.interp.call(method, [], kwargs, NODE, "")
        return read_valid_backends(result, method.func.path if isinstance(method, Bound) else "")

    def valid_backends_call(self, config: Config) -> tuple[Any, dict[str, Any]]:
        """The platform's ``get_valid_backends`` and the arguments vLLM passes it
        for ``config`` (``num_heads`` where the release's signature has it)."""
        interp = self.interp
        kept = self._valid_backends
        if kept is not None and kept[0] == interp.class_writes:
            method, with_heads = kept[1], kept[2]
        else:  # kept while no class changes, where looking it up read nothing
            with interp.question(steps=None) as lookup:
                platform = machine_of(interp).platform(interp)
                method = interp.getattr(platform, "get_valid_backends", NODE, "")
            with_heads = isinstance(method, Bound) and "num_heads" in param_names(method.func.node)
            if not lookup.read:
                self._valid_backends = (interp.class_writes, method, with_heads)
        kwargs: dict[str, Any] = {
            "device_capability": self.device_capability(config),
            "attn_selector_config": self.build_config(config),
        }
        if with_heads:
            kwargs["num_heads"] = config.num_heads
        return method, kwargs

    def read_gpu_argument(self) -> None:
        """From now on, a question that looks at the ``device_capability`` argument
        reads the GPU (:class:`GpuInstance`), as one reading the machine's does."""
        if not self.gpu_argument_read:
            self.gpu_argument_read = True
            self._capabilities.clear()

    def device_capability(self, config: Config) -> Any:
        """The tree's ``DeviceCapability`` of ``config``'s GPU."""
        key = self.gpu(config)
        found = self._capabilities.get(key)
        if found is None:
            cls = capability_class(self.interp)
            found = self.interp.call(cls, list(key), {}, NODE, "")
            if self.gpu_argument_read and isinstance(found, Instance):
                found = GpuInstance(found, self.interp)
            self._capabilities[key] = found
        return found


__all__ = [
    "LAYER_FIELDS",
    "OPTION_FIELDS",
    "Config",
    "Decision",
    "Selector",
    "read_valid_backends",
]
