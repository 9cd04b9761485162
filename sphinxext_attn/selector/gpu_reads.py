"""Where a question of the selector's table looks at the GPU, so that its answer
serves on another GPU where it would be the same.

A backend's reasons depend on the GPU only where the code looks at it: the
capability the machine reports, or the ``device_capability`` the platform's
loop passes on (:class:`~sphinxext_attn.pyeval.values.GpuInstance`). In
vLLM that is a few small calls (``supports_compute_capability(capability)``,
``supports_combination(..., device_capability)``, a check of the platform's
capability). :class:`GpuReads`, set on the evaluator while a question is
asked, hears of every call and every read of the GPU, and keeps the outermost
calls that read it in their own code (:class:`Observed`): above them nothing
looks at the GPU, so on another GPU the question takes the same path as long
as each of those calls answers the same there, reading the same machine facts.
:meth:`GpuReads.replay` asks them again on another GPU (mostly remembered
answers); where all agree, the question's answer is the answer there too. A
question that reads the GPU outside any call, or in a call that changes a
class, or passes the GPU on inside another value, is kept to its GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval import (
    CAPABILITY,
    NODE,
    EnumMember,
    External,
    GpuInstance,
    Instance,
    PyClass,
    PyFunction,
    Raised,
    Unknown,
    Value,
)

if TYPE_CHECKING:
    from sphinxext_attn.pyeval import Interpreter
    from sphinxext_attn.pyeval.question import ObservedCall

#: values a call's argument or answer may be to be compared or passed again as is
_PLAIN = (type(None), bool, int, float, str)
_KEPT = (PyClass, EnumMember, External, PyFunction)


@dataclass(frozen=True)
class Observed:
    """One call that read the GPU in its own code: its arguments (the GPU's
    ``DeviceCapability`` among them as it was passed), its answer and the machine
    facts it read."""

    func: PyFunction
    args: tuple[Value, ...]
    kwargs: tuple[tuple[str, Value], ...]
    answer: Value
    facts: int


@dataclass
class _Frame:
    direct: bool = False
    writes: int = 0
    found: list[Observed] = field(default_factory=list)


@dataclass(frozen=True)
class _Token:
    """Where :meth:`GpuReads.listen` started: the call's record, how much it had
    noted and the flags put aside."""

    frame: _Frame
    found: int
    direct: bool
    kept: bool


@dataclass(frozen=True)
class _Heard:
    """What one remembered statement made the observer hear."""

    found: tuple[Observed, ...]
    direct: bool
    kept: bool


class GpuReads:
    """The observer of one question (see the module docstring)."""

    def __init__(self, interp: Interpreter) -> None:
        self.interp = interp
        self._top = _Frame()
        #: the calls being observed, innermost last, over the question's own record
        self._stack: list[_Frame] = [self._top]
        #: the GPU was read where no call can be asked again (or a call that read
        #: it cannot be): the answer is the GPU's own
        self.kept = False

    def read_gpu(self) -> None:
        self._stack[-1].direct = True

    def listen(self) -> _Token:
        """Start noting what is heard in the current call (a remembered statement
        of it is run): its flags are put aside until :meth:`heard`."""
        frame = self._stack[-1]
        token = _Token(frame, len(frame.found), frame.direct, self.kept)
        frame.direct = self.kept = False
        return token

    def heard(self, token: object) -> _Heard | tuple[()]:
        """What was heard since :meth:`listen` (the calls noted, a direct read of
        the GPU, an answer kept to its GPU), the flags put aside put back; ``()``:
        nothing."""
        assert isinstance(token, _Token)
        frame = token.frame
        heard = _Heard(tuple(frame.found[token.found :]), frame.direct, self.kept)
        frame.direct |= token.direct
        self.kept |= token.kept
        return heard if heard.found or heard.direct or heard.kept else ()

    def hear_again(self, heard: object) -> None:
        """Hear in the current call what :meth:`heard` returned (a statement whose
        effect is replayed from its memo, not run)."""
        assert isinstance(heard, _Heard)
        frame = self._stack[-1]
        frame.found.extend(heard.found)
        frame.direct |= heard.direct
        self.kept |= heard.kept

    def observe(self, call: ObservedCall, run: Callable[[], Value]) -> Value:
        """Run one call, noting it where it is the outermost to read the GPU itself."""
        interp = self.interp
        saved, interp.capability_read = interp.capability_read, 0  # (this call's reads)
        frame = _Frame(writes=interp.class_writes)
        self._stack.append(frame)
        ok = False
        try:
            value = run()
            ok = True
            return value
        finally:
            read = interp.capability_read
            interp.capability_read = saved | read
            self._stack.pop()
            parent = self._stack[-1]
            if not frame.direct:
                parent.found.extend(frame.found)
            elif ok and self._kept_for_later(call, value, frame.writes):
                func, args, kwargs = call
                seen = Observed(
                    func, tuple(args), tuple(kwargs.items()), value, read & ~CAPABILITY
                )
                parent.found.append(seen)
            else:
                self.kept = True

    def _kept_for_later(self, call: ObservedCall, value: object, writes: int) -> bool:
        """Whether the call can be asked again on another GPU and compared: it changed
        no class, its arguments and its answer are data that stay as they are."""
        func, args, kwargs = call
        return (
            writes == self.interp.class_writes
            and isinstance(func, PyFunction)
            and all(map(_passed, [*args, *kwargs.values()]))
            and _comparable(value)
        )

    def observed(self) -> tuple[Observed, ...] | None:
        """The calls the answer looked at the GPU through (None: it is kept to its GPU)."""
        if self.kept or self._top.direct or len(self._stack) > 1:
            return None
        return tuple(self._top.found)


def replay(interp: Interpreter, observed: tuple[Observed, ...], gpu: object) -> bool:
    """Whether each call answers on the question's GPU (``gpu``: its
    ``DeviceCapability``) as it did, reading the same facts; inside a question."""
    for seen in observed:
        args = [gpu if isinstance(a, GpuInstance) else a for a in seen.args]
        kwargs = {k: gpu if isinstance(v, GpuInstance) else v for k, v in seen.kwargs}
        try:
            with interp.question(steps=None) as asked:
                value = interp.invoke(seen.func, args, kwargs, NODE)
        except (Unknown, Raised, RecursionError):
            return False
        if asked.read & ~CAPABILITY != seen.facts or not _same(value, seen.answer):
            return False
    return True


def _passed(value: object) -> bool:
    """An argument that can be passed again later as it is: plain or immutable data
    of the tree, the GPU itself (swapped for another GPU's), not the GPU inside
    another value."""
    if isinstance(value, (GpuInstance, *_KEPT)) or type(value) in _PLAIN:
        return True
    if type(value) is tuple:
        return all(map(_plain_data, value))
    if type(value) is Instance and value.items is not None:  # a named tuple
        return all(map(_plain_data, value.items))
    return False


def _plain_data(value: object) -> bool:
    if type(value) in _PLAIN or isinstance(value, _KEPT):
        return True
    return type(value) is tuple and all(map(_plain_data, value))


def _comparable(value: object) -> bool:
    if isinstance(value, list | tuple) and type(value) in (list, tuple):
        return all(map(_comparable, value))
    return _plain_data(value)


def _same(value: object, seen: object) -> bool:
    if type(value) is not type(seen):
        return False
    if isinstance(value, list | tuple) and isinstance(seen, list | tuple):
        return len(value) == len(seen) and all(map(_same, value, seen))
    if isinstance(value, _KEPT):
        return value is seen
    return bool(value == seen)


__all__ = ["GpuReads", "Observed", "replay"]
