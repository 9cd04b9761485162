"""Questions the interactive selector's table is built from, asked the way vLLM asks them.

Two questions, both answered by evaluating the tree's own code with the
:class:`~sphinxext_attn.select.decision.Selector`'s evaluator:

* :meth:`Prober.priorities`: the list vLLM's ``_get_backend_priorities``
  returns for a configuration (the function itself, called with the
  arguments its signature takes, by name);
* :meth:`Prober.reasons`: why one backend rejects a configuration. The
  platform's ``get_valid_backends`` is evaluated as for a whole decision, with
  ``_get_backend_priorities`` answering just that backend, so the reasons are
  produced by the same loop (import failures included) as the CLI's.
"""

from __future__ import annotations

from typing import Any

from sphinxext_attn.pyeval import STEPS_PER_DECISION, Raised, Unknown
from sphinxext_attn.pyeval.devices import platform_class
from sphinxext_attn.pyeval.statements import NOT_EVALUATED
from sphinxext_attn.pyeval.values import NODE, Bound, Builtin, EnumMember, Instance, PyFunction
from sphinxext_attn.select.decision import Config, Selector, read_valid_backends
from sphinxext_attn.select.priority_paths import priority_function
from sphinxext_attn.select.records import param_names
from sphinxext_attn.vocab.names import PRIORITY_FUNCTION
from sphinxext_attn.vocab.paths import CUDA_PLATFORM_FILE, CUDA_PLATFORM_MODULE

#: parameters of the priority function that are not configuration fields
CAPABILITY_PARAM = "device_capability"


class Prober:
    """Per-backend and per-list questions on one tree (one evaluator)."""

    def __init__(self, selector: Selector) -> None:
        self.selector = selector
        self.interp = selector.interp
        platform = self.interp.machine.environment.platform
        if platform == "cuda":
            function = priority_function(self.interp)
            module = self.interp.module(CUDA_PLATFORM_MODULE)  # where the stand-in goes
            where = CUDA_PLATFORM_FILE
        else:  # the module of the platform's class holds its priority function (ROCm)
            cls = platform_class(self.interp, platform)
            module, where = cls.module, cls.path
            found = (
                module.lookup(PRIORITY_FUNCTION, self.interp, NODE)
                if module.has(PRIORITY_FUNCTION)
                else None
            )
            function = found if isinstance(found, PyFunction) else None
        if function is None or module is None:
            raise Unknown(f"no plain function {PRIORITY_FUNCTION} in the tree", where)
        self.function = function
        self.module = module
        self.members: dict[str, EnumMember] = {}
        self._reasons: dict[tuple[str, tuple[Any, ...]], tuple[str, ...]] = {}
        #: the machine facts (name -> value) each question read, gathered by the
        #: table's builder per entry (see :mod:`.selector_facts`)
        self.read: dict[str, str] = {}
        self._read: dict[tuple[str, tuple[Any, ...]], dict[str, str]] = {}
        #: members of another evaluator of the same tree, whose enum is looked up here
        self._known: list[EnumMember] = []

    def learn_from(self, other: Prober) -> None:
        """Find backends by the enum ``other`` found them in (see :meth:`member`)."""
        self._known = list(other.members.values())[:1]

    @property
    def priority_params(self) -> list[str]:
        """The configuration fields the priority list can depend on (capability aside)."""
        args = self.function.node.args
        names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
        fields = Config.__dataclass_fields__
        return [n for n in names if n in fields]

    def priorities(self, config: Config) -> list[str]:
        """The names ``_get_backend_priorities`` returns for ``config``."""
        interp = self.interp
        with interp.question(capability=config.capability_tuple, steps=STEPS_PER_DECISION) as q:
            selector_config = self.selector.build_config(config)
            kwargs: dict[str, Any] = {}
            if CAPABILITY_PARAM in param_names(self.function.node):
                kwargs[CAPABILITY_PARAM] = self.selector.device_capability(config)
            for name in self.priority_params:
                if name == "num_heads":
                    kwargs[name] = config.num_heads
                else:
                    kwargs[name] = interp.getattr(selector_config, name, NODE, "")
            result = interp.call(self.function, [], kwargs, NODE, self.module.path)
        self.read.update(q.facts)
        names = []
        for member in result:
            if isinstance(member, EnumMember):
                self.members.setdefault(member.name, member)
                names.append(member.name)
        return names

    def reasons(self, backend: str, config: Config) -> tuple[str, ...]:
        """Why ``backend`` rejects ``config`` (empty: it accepts it), as vLLM words it."""
        key = (backend, config.key())
        if key not in self._reasons:
            facts: dict[str, str] = {}
            self._reasons[key] = self._ask(backend, config, facts)
            self._read[key] = facts
        self.read.update(self._read[key])
        return self._reasons[key]

    def member(self, backend: str) -> EnumMember:
        """The enum member named ``backend`` (as a priority list gave it, else the
        registry enum's own: a table built for another setting of the machine asks
        backends its own lists have not named yet)."""
        found = self.members.get(backend)
        if found is None:
            for member in self._known:
                module = member.cls.module
                enum = self.interp.module(module.dotted)
                cls = enum.lookup(member.cls.name, self.interp, NODE) if enum else None
                value = self.interp.class_own_attr(cls, backend) if cls is not None else None
                if isinstance(value, EnumMember):
                    found = self.members[backend] = value
                    break
            else:
                raise KeyError(backend)
        return found

    def _ask(self, backend: str, config: Config, facts: dict[str, str]) -> tuple[str, ...]:
        interp = self.interp
        member = self.member(backend)
        saved = self.module.values.get(PRIORITY_FUNCTION)
        self.module.values[PRIORITY_FUNCTION] = Builtin(
            PRIORITY_FUNCTION, lambda it, args, kw, node, path: [member]
        )
        try:
            with interp.question(
                capability=config.capability_tuple, steps=STEPS_PER_DECISION
            ) as q:
                method, kwargs = self.selector.valid_backends_call(config)
                if not isinstance(method, Bound):
                    raise Unknown("get_valid_backends is not a method", self.module.path)
                target = method.target
                if method.func.kind == "classmethod" and isinstance(target, Instance | EnumMember):
                    target = target.cls
                # not through the call memo: the answer depends on the stand-in list
                result = interp.run_function(method.func, [target], kwargs)
                decision = read_valid_backends(result, method.func.path)
            facts.update(q.facts)
        except Unknown as exc:
            return (f"{NOT_EVALUATED}{exc}",)
        except Raised as exc:
            return (f"{NOT_EVALUATED}{exc.kind}: {exc.message}",)
        finally:
            if saved is None:
                self.module.values.pop(PRIORITY_FUNCTION, None)
            else:
                self.module.values[PRIORITY_FUNCTION] = saved
        if decision.selected or not decision.priorities:
            return ()
        if backend in decision.unknown:
            return (f"{NOT_EVALUATED}{decision.unknown[backend]}",)
        return tuple(decision.rejected.get(backend, ()))


__all__ = ["Prober"]
