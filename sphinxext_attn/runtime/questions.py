"""Ask a backend class what vLLM asks it, over the grids of the contract.

Each answer is a value or an :class:`Unknown` with its reason and location.
A question that does not name a GPU is first asked with no capability; if
the answer depends on the GPU it is asked on every capability of the grid
and the answers are joined (a KV dtype some GPU supports is listed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sphinxext_attn.knowledge.machine import capability_class
from sphinxext_attn.pyeval import (
    CAPABILITY,
    NODE,
    STEPS_PER_CELL,
    AbstractStr,
    Bound,
    Concretize,
    EnumMember,
    External,
    Instance,
    Interpreter,
    LiteralType,
    PyClass,
    PyFunction,
    Question,
    Raised,
    Unknown,
    class_mro,
    explore_strings,
    member_names,
)
from sphinxext_attn.runtime import capability_points as told
from sphinxext_attn.vocab.names import (
    ATTENTION_TYPE_ENUM,
    CACHE_DTYPE_LITERAL,
    CAPABILITIES,
    DTYPES,
    FALLBACK_KV_DTYPES,
)
from sphinxext_attn.vocab.paths import CACHE_DTYPE_MODULES


@dataclass
class Answer:
    """One evaluated cell: its value, or why there is none."""

    value: Any = None
    unknown: Unknown | None = None
    #: the answer differs between GPUs (joined over the capability grid)
    by_capability: bool = False
    raised: str = ""
    #: with ``by_capability``: the capability of each value (where the class did not raise)
    capabilities: list[tuple[int, int]] = field(default_factory=list)


@dataclass
class Asker:
    """Questions to one backend class through one interpreter."""

    interp: Interpreter
    cls: PyClass
    #: what the questions since the last :meth:`assumed` read (facts, capability)
    read_mask: int = field(default=0, init=False)
    #: what the last :meth:`call` read (did its answer depend on the GPU?)
    last_read: int = field(default=0, init=False)
    #: methods looked up without reading the device capability, by name and the
    #: count of class attribute writes (a grid asks the same method many times)
    _methods: dict[tuple[str, int], Any] = field(default_factory=dict, init=False)

    def method(self, name: str) -> Any:
        interp = self.interp
        key = (name, interp.class_writes)
        found = self._methods.get(key)
        if found is not None:
            return found
        with interp.question(steps=None, where=(self.cls.path, 0)) as q:
            found = interp.getattr(self.cls, name, NODE, self.cls.path)
        if not q.read and interp.class_writes == key[1]:
            self._methods[key] = found
        return found

    def call(self, name: str, *args: Any, capability: tuple[int, int] | None = None) -> Any:
        """``cls.<name>(*args)`` asked as one question (a cell on one GPU)."""
        q: Question | None = None
        try:
            where = (self.cls.path, self.cls.node.lineno)
            with self.interp.question(
                capability=capability, steps=STEPS_PER_CELL, where=where
            ) as q:
                method = self.method(name)
                if not takes(method, len(args)):
                    func = method.func if isinstance(method, Bound) else method
                    raise Unknown(
                        f"{name}() does not take the {len(args)} argument(s) vLLM passes",
                        func.path,
                        func.node.lineno,
                    )
                return self.interp.call(method, list(args), {}, NODE, self.cls.path)
        finally:
            if q is not None:
                self.last_read = q.read
                self.read_mask |= q.read

    def assumed(self) -> list[str]:
        """The machine facts the answers since the last call rest on (``NAME=VALUE``)."""
        mask, self.read_mask = self.read_mask, 0
        return [f"{name}={value}" for name, value in self.interp.facts_of(mask)]

    def ask(self, name: str, *args: Any) -> Answer:
        """A question that names no GPU: joined over the grid if the GPU matters."""
        try:
            return Answer(self.call(name, *args))
        except Raised as exc:
            return Answer(raised=f"{exc.kind}: {exc.message}".rstrip(": "))
        except Unknown as exc:
            if not self.last_read & CAPABILITY:  # unknown for another reason
                return Answer(unknown=exc)
        values, caps = [], []
        for cap in CAPABILITIES:
            try:
                values.append(self.call(name, *args, capability=cap))
            except Raised:
                continue
            except Unknown as exc:
                return Answer(unknown=exc)
            caps.append(cap)
        return Answer(values, by_capability=True, capabilities=caps)

    def ask_flag(self, name: str) -> Answer:
        answer = self.ask(name)
        if answer.by_capability:
            truth = [self.interp.truth(v, NODE, self.cls.path) for v in answer.value]
            answer.value = any(truth)
        elif answer.unknown is None and not answer.raised:
            answer.value = self.interp.truth(answer.value, NODE, self.cls.path)
        return answer

    def ask_impl_flag(self, attribute: str) -> Answer:
        """``get_impl_cls().<attribute>``: where releases without a backend-level
        question keep a capability (DCP: ``can_return_lse_for_decode``). A backend
        with no impl class (``NotImplementedError``) has none, as later vLLM says."""
        try:
            try:
                impl = self.call("get_impl_cls")
            except Raised as exc:
                if exc.kind == "NotImplementedError":
                    return Answer(False)
                raise
            value = self.interp.getattr(impl, attribute, NODE, self.cls.path)
            return Answer(self.interp.truth(value, NODE, self.cls.path))
        except Raised as exc:
            return Answer(raised=f"{exc.kind}: {exc.message}".rstrip(": "))
        except Unknown as exc:
            return Answer(unknown=exc)

    def has(self, name: str) -> Answer | None:
        """None when the class has the method ``name`` (on some GPU of the grid, when
        the class body picks it by GPU); else why there is no answer."""
        why: Answer | None = None
        read = 0
        for capability in (None, *CAPABILITIES):
            failure: Unknown | Raised | None = None
            with self.interp.question(capability=capability, steps=None) as q:
                try:
                    with self.interp.guarded((self.cls.path, 0)):
                        self.method(name)
                except (Unknown, Raised) as exc:
                    failure = exc
            read |= q.read
            if failure is None:
                return None
            if isinstance(failure, Raised):
                why = why or Answer(raised=f"{failure.kind}: {failure.message}".rstrip(": "))
            elif capability is not None or not read & CAPABILITY:
                return Answer(unknown=failure)
            if not read & CAPABILITY:
                break  # the same on every GPU
        return why

    def ask_each(self, name: str, values: list[Any], labels: list[str]) -> Answer:
        """Which of ``values`` the one-argument question accepts (by label).

        A value for which the method raises is not accepted: vLLM, asking it, would
        fail with that exception. A method the class does not have, or that does not
        take the argument, is no answer for any value (the question does not apply);
        what the machine model lacks is :class:`Unknown`, never a raise."""
        missing = self.has(name)
        if missing is not None:
            return missing
        if values and all(type(v) is str for v in values):
            return self._ask_strings(name, values, labels)
        accepted: list[str] = []
        by_cap = False
        for value, label in zip(values, labels, strict=True):
            answer = self.ask(name, value)
            if answer.unknown is not None:
                return answer
            if answer.raised:
                continue
            if answer.by_capability:
                by_cap = True
                ok = any(self.interp.truth(v, NODE, self.cls.path) for v in answer.value)
            else:
                ok = self.interp.truth(answer.value, NODE, self.cls.path)
            if ok:
                accepted.append(label)
        return Answer(accepted, by_capability=by_cap)

    def _ask_strings(self, name: str, values: list[str], labels: list[str]) -> Answer:
        """:meth:`ask_each` over strings, asked with an abstract string: a run per
        path, in the order of the strings (:mod:`~sphinxext_attn.pyeval.abstract_str`);
        a string the run cannot keep abstract is asked alone, as :meth:`ask_each`
        asks each. The same answer, the same facts read, in the same order."""
        interp, path = self.interp, self.cls.path
        #: set when a string asked alone answers unknown (the answer then) or by GPU
        stop: list[Answer] = []
        by_cap = False

        def run(value: AbstractStr) -> bool:
            try:
                found = self.call(name, value)
            except Raised:
                return False  # vLLM, asking it, would fail: not accepted
            except Unknown:  # asked alone: what it lacks, or its GPU
                raise Concretize from None
            try:
                return interp.truth(found, NODE, path)
            except (Unknown, Raised):
                raise Concretize from None

        def alone(index: int) -> bool:
            nonlocal by_cap
            answer = self.ask(name, values[index])
            if answer.unknown is not None:
                stop.append(answer)
                return False
            if answer.raised:
                return False
            if answer.by_capability:
                by_cap = True
                return any(interp.truth(v, NODE, path) for v in answer.value)
            return interp.truth(answer.value, NODE, path)

        accepted = explore_strings(values, run, alone, lambda: bool(stop))
        if stop:
            return stop[0]
        return Answer([labels[i] for i in accepted], by_capability=by_cap)

    def capabilities(self) -> Answer:
        missing = self.has("supports_compute_capability")
        if missing is not None:
            return missing
        try:
            with self.interp.guarded((self.cls.path, 0)):
                device_capability = capability_class(self.interp)
        except (Unknown, Raised) as exc:
            return Answer(unknown=exc if isinstance(exc, Unknown) else Unknown(str(exc)))

        def check(cap: tuple[int, int]) -> Any:
            made = self.interp.call(device_capability, list(cap), {}, NODE, self.cls.path)
            return self.call("supports_compute_capability", made, capability=cap)

        #: the grid's answers of the traced runs (the same question, asked with
        #: fresh memos): a value, or None where the class raises
        answered: dict[tuple[int, int], tuple[Any] | None] = {}

        def traced(cap: tuple[int, int]) -> Any:
            try:
                value = check(cap)
            except Raised:
                answered[cap] = None
                raise
            answered[cap] = (value,)
            return value

        named = told.named_capabilities(told.traced_functions(self.interp, CAPABILITIES, traced))
        grid = told.points(CAPABILITIES, named)
        accepted = []
        for cap in grid:
            try:
                if cap in answered:  # an unknown is asked again (with the memos)
                    found = answered[cap]
                    if found is None:
                        continue
                    value = found[0]
                else:
                    value = check(cap)
            except Raised:
                continue
            except Unknown as exc:
                return Answer(unknown=exc)
            if self.interp.truth(value, NODE, self.cls.path):
                accepted.append(cap)
        return Answer(accepted, capabilities=grid)


def takes(method: Any, count: int) -> bool:
    """Whether a tree function called as ``method(*count arguments)`` binds them."""
    func = method.func if isinstance(method, Bound) else method
    if not isinstance(func, PyFunction):
        return True
    spec = func.node.args
    positional = [*spec.posonlyargs, *spec.args][1 if isinstance(method, Bound) else 0 :]
    if count > len(positional) and spec.vararg is None:
        return False
    required = len(positional) - len(spec.defaults)
    return count >= required and all(d is not None for d in spec.kw_defaults)


def block_size_labels(value: Any) -> list[str] | None:
    """``[MultipleOf(16), 32]`` -> ``["%16", "32"]``; None when not a list of sizes."""
    if not isinstance(value, list | tuple):
        return None
    out = []
    for item in value:
        if isinstance(item, bool):
            return None
        if isinstance(item, int):
            out.append(str(item))
        elif isinstance(item, Instance) and set(item.fields) == {"base"}:
            out.append(f"%{item.fields['base']}")
        else:
            return None
    return out


def sorted_block_labels(labels: list[str]) -> list[str]:
    """Block sizes smallest first, each once: a size a ``%N`` in the list already
    covers is left out (``%16, 32`` is ``%16``), ``%N`` before the sizes it equals."""
    steps = [int(x[1:]) for x in labels if x.startswith("%")]
    kept = [
        x
        for x in labels
        if not any(
            int(x.lstrip("%")) % s == 0 and (not x.startswith("%") or int(x[1:]) > s)
            for s in steps
        )
    ]
    return sorted(dict.fromkeys(kept), key=lambda x: (int(x.lstrip("%")), not x.startswith("%")))


def kv_cache_dtypes(interp: Interpreter) -> tuple[str, ...]:
    """The release's ``CacheDType`` literal values, in declaration order."""
    for dotted in CACHE_DTYPE_MODULES:
        try:
            module = interp.module(dotted)
            if module is None or not module.has(CACHE_DTYPE_LITERAL):
                continue
            with interp.guarded():
                literal = module.lookup(CACHE_DTYPE_LITERAL, interp, NODE)
        except (Unknown, Raised):
            continue
        if isinstance(literal, LiteralType) and all(isinstance(i, str) for i in literal.items):
            return tuple(literal.items)
    return FALLBACK_KV_DTYPES


def attention_types(interp: Interpreter, cls: PyClass) -> list[tuple[str, Any]]:
    """``(name, value)`` of each attention type the backend's interface module
    defines: the members of the ``AttentionType`` enum, or, before it was an
    enum (vLLM 0.13), the string constants of the plain class."""
    for klass in reversed(class_mro(cls, interp)):
        if isinstance(klass, PyClass) and klass.module.has(ATTENTION_TYPE_ENUM):
            try:
                with interp.guarded():
                    found = _attention_types(interp, klass)
            except (Unknown, Raised):
                continue
            if found is not None:
                return found
    return []


def _attention_types(interp: Interpreter, klass: PyClass) -> list[tuple[str, Any]] | None:
    kind = klass.module.lookup(ATTENTION_TYPE_ENUM, interp, NODE)
    if not isinstance(kind, PyClass):
        return None
    if interp.is_enum(kind):
        members = interp.iterate(kind, NODE, klass.path)
        return [(m.name, m) for m in members if isinstance(m, EnumMember)]
    pairs = [(name, interp.getattr(kind, name, NODE, klass.path)) for name in member_names(kind)]
    return [(n, v) for n, v in pairs if isinstance(v, str)]


def dtype_values() -> list[External]:
    return [External(q) for _, q in DTYPES]
