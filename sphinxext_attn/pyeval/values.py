"""Values of the static evaluator, and the two ways an evaluation stops early.

Plain Python data (ints, strings, tuples, lists, dicts, ``None``) stand for
themselves. Everything else the analysed code can hold is one of the small
classes here: a class or function of the tree, a module, an instance of a
tree class (named tuples, dataclasses, the platform), an enum member, or an
:class:`External` name from outside the tree (``torch.float16``) that is
only ever compared, never called.
"""

from __future__ import annotations

import ast
import builtins
import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn, TypeAlias

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.question import QuestionMixin
    from sphinxext_attn.pyeval.scope import ModuleScope, Scope

#: A value of the analysed program: genuinely dynamic (plain data, or one of the
#: classes here), so the evaluator's own types cannot narrow it further.
Value: TypeAlias = Any

#: Bit of ``Interpreter.capability_read`` for the device capability; the higher
#: bits are the machine facts read (``Interpreter.fact_bit``), so an answer
#: remembered by a memo brings the facts it rests on with it.
CAPABILITY = 1
#: The node a question put from outside the tree (a caller's ``getattr``,
#: ``call``, ``truth``) is charged to: it has no place in the analysed code.
NODE = ast.Pass()


def line_of(node: ast.AST | None) -> int:
    """The line an answer is charged to: the node's, 0 for a node with none (a
    question put from outside the tree, :data:`NODE`)."""
    return getattr(node, "lineno", 0)


class Return(NamedTuple):
    """A ``return`` the evaluator executed (kept while a question records them)."""

    path: str
    line: int
    value: Value
    #: the returned expression (None: a bare ``return``)
    expr: ast.expr | None


class Unknown(Exception):
    """The evaluator cannot answer: the reason and where, never a guess."""

    def __init__(self, reason: str, path: str = "", line: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path = path
        self.line = line
        #: a function of the tree whose answer can be assumed instead (``--assume
        #: NAME=...``): the innermost argument-less one this unknown came out of
        self.assumable = ""
        #: the outermost argument-less function it came out of (``is_310p`` over the
        #: ``get_ascend_soc_version`` it calls): the fact a platform's rule asks
        self.outermost = ""

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path

    def located(self, path: str, line: int) -> Unknown:
        """The same unknown (its kind kept) placed at ``path``:``line``."""
        placed = copy.copy(self)
        placed.path, placed.line = path, line
        return placed

    def __str__(self) -> str:
        return f"{self.reason} ({self.where})" if self.path else self.reason


class LimitExceeded(Unknown):
    """The evaluation stopped at one of the evaluator's limits, not at code outside
    the subset: the step budget (``kind`` "steps"), nesting of calls, expressions
    or values ("nesting"), the size of a value ("size"), or a name defined in terms
    of itself ("cycle"). A body that hits one is hostile, not merely unsupported."""

    def __init__(self, reason: str, path: str = "", line: int = 0, kind: str = "steps") -> None:
        super().__init__(reason, path, line)
        self.kind = kind


def out_of_steps(exc: BaseException) -> bool:
    """Whether ``exc`` is the step budget running out (the question stops there:
    nothing that catches an unknown may carry on past it)."""
    return isinstance(exc, LimitExceeded) and exc.kind == "steps"


class Unbound(Unknown):
    """A module name no statement binds when the module runs (``if TYPE_CHECKING:``)."""


class Foreign:
    """An object a :class:`~sphinxext_attn.pyeval.world.World` made for the analysed
    code (a regex match, a library's configuration): truthy, its attributes the
    world's to answer (``World.foreign_attr``)."""


class LazyGen:
    """A generator expression: its items are evaluated as they are taken, so
    ``any(...)`` stops at the first true one (later items may raise or be unknown),
    and once taken they are gone, as in Python."""

    def __init__(self, items: Iterator[Value]) -> None:
        self.items = items

    def take(self) -> list[Value]:
        """Every item left."""
        return list(self.items)


@dataclass(eq=False)
class Caught:
    """The exception bound by ``except ... as e``: truthy and itself, its
    attributes and text not evaluated (never the class standing in for it)."""

    kind: str
    #: its one argument where the evaluator raised it itself and knows it exactly
    #: (an import that fails): then ``str(e)`` and ``repr(e)`` are Python's
    message: str | None = None


class Raised(Exception):
    """An exception raised by the analysed code (``raise ValueError(...)``)."""

    def __init__(
        self, kind: str, message: str = "", bases: tuple[str, ...] = (), exact: bool = False
    ) -> None:
        super().__init__(kind, message)
        self.kind = kind
        self.message = message
        #: names of the raised class's bases (a tree class deriving from ValueError)
        self.bases = bases
        #: raised by the evaluator with the one argument Python's own raise has
        self.exact = exact

    def matches(self, handler: str) -> bool:
        """Whether ``except handler:`` catches it."""
        return any(exception_matches(kind, handler) for kind in (self.kind, *self.bases))


def _builtin_exceptions() -> dict[str, frozenset[str]]:
    """Each builtin exception's name -> the names that catch it (those of every class
    of its MRO), read from this Python's own builtins (``EnvironmentError`` and
    ``OSError`` name one class, so each catches the other)."""
    names: dict[type, set[str]] = {}
    for name, value in vars(builtins).items():
        if isinstance(value, type) and issubclass(value, BaseException):
            names.setdefault(value, set()).add(name)
    return {
        name: frozenset(n for c in cls.__mro__ for n in names.get(c, ()))
        for cls, own in names.items()
        for name in own
    }


#: the builtin exception hierarchy, by name
EXCEPTION_MRO = _builtin_exceptions()


def exception_matches(kind: str, handler: str) -> bool:
    """Whether ``except handler`` catches a raised ``kind`` (builtin names)."""
    return kind == handler or handler in EXCEPTION_MRO.get(kind, ())


@dataclass(frozen=True)
class External:
    """A name from outside the tree (``torch.bfloat16``, ``flashinfer.x``): compared
    by name, attribute access extends the name, calling it is unknown."""

    qualname: str

    def __repr__(self) -> str:
        return self.qualname


@dataclass(eq=False)
class PyClass:
    """A class defined in the tree (or built by a call, as composite backends are)."""

    name: str
    node: ast.ClassDef
    module: ModuleScope
    #: the scope the class statement ran in (a function frame for nested classes)
    scope: Scope
    attrs: dict[str, Value] = field(default_factory=dict)
    mro_cache: list[Value] | None = None
    bases_cache: list[Value] | None = None

    @property
    def path(self) -> str:
        return self.module.path

    def __repr__(self) -> str:
        return f"<class {self.name}>"


@dataclass(eq=False)
class PyFunction:
    """A ``def`` or ``lambda`` of the tree, with the scope it closes over."""

    name: str
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    module: ModuleScope
    scope: Scope
    #: "function", "classmethod", "staticmethod" or "property"
    kind: str = "function"
    #: the class whose body defines it (for ``super()``)
    owner: PyClass | None = None
    #: default values, evaluated once (as at ``def`` time) when first needed
    defaults: dict[str, Value] = field(default_factory=dict)
    #: ``functools.cache``/``lru_cache``: its answers are kept even when running it
    #: changed shared values (Python does not run it again)
    cached: bool = False
    #: decorators that are functions of the tree (``@if_aiter_supported``), outermost
    #: first: applied to the plain function when it is called, as Python applied them
    wrappers: tuple[ast.expr, ...] = ()

    @property
    def path(self) -> str:
        return self.module.path

    def __repr__(self) -> str:
        return f"<function {self.name}>"


@dataclass(frozen=True, eq=False)
class Bound:
    """A function bound to a class (classmethods) or an instance."""

    func: PyFunction
    target: Value


@dataclass(eq=False)
class Instance:
    """An instance of a tree class: named tuples, dataclasses, the platform."""

    cls: PyClass
    fields: dict[str, Value] = field(default_factory=dict)
    #: the items of a ``NamedTuple`` instance, in field order
    items: tuple[Value, ...] | None = None
    #: a dataclass instance: ``==`` compares the fields
    by_fields: bool = False
    #: the fields ``==`` compares (``compare=True``), in order
    compared: tuple[str, ...] = ()
    #: all the class's fields: holding another name makes ``==`` unknown
    declared: frozenset[str] = frozenset()
    #: its class or a base defines ``__eq__`` (nearer than a dataclass's)
    own_eq: bool = False

    def __repr__(self) -> str:
        return f"{self.cls.name}({', '.join(f'{k}={v!r}' for k, v in self.fields.items())})"

    def __eq__(self, other: object) -> bool:
        """A named tuple is equal to an equal tuple (as a dict key, in a set, in
        ``list.index``); any other instance only to itself, unless its class says
        otherwise (see :func:`.methods.custom_equality`)."""
        if self.items is None:
            return self is other
        if isinstance(other, Instance):
            return other.items is not None and self.items == other.items
        return isinstance(other, tuple) and self.items == other

    def __hash__(self) -> int:
        """A dataclass comparing by fields hashes by them when frozen, else has no
        hash (``__hash__ = None``), and so does a class defining ``__eq__`` unless
        it defines ``__hash__`` too: never identity, so not evaluated."""
        if self.own_eq or (self.by_fields and self.items is None):
            kind = "its own __eq__" if self.own_eq else "a dataclass"
            message = f"hash of a {self.cls.name} instance ({kind}) not evaluated"
            raise Unknown(message, self.cls.path, self.cls.node.lineno)
        return id(self) if self.items is None else hash(self.items)


class GpuInstance(Instance):
    """The ``DeviceCapability`` a question is asked about, passed as an argument:
    looking at what it holds (a field, an item, ``==``, its hash) reads the GPU, as
    :meth:`Machine.gpu` does, so an answer that never looked at it answers alike on
    every GPU. Passing it on reads nothing; memo keys take its items quietly
    (:func:`.stmtmemo.key_part`)."""

    def __init__(self, base: Instance, reader: QuestionMixin) -> None:
        #: the interpreter a look is a read of the GPU of (:meth:`~.QuestionMixin.read_gpu`)
        self.reader = reader
        super().__init__(
            base.cls,
            base.fields,
            base.items,
            base.by_fields,
            base.compared,
            base.declared,
            base.own_eq,
        )

    @property
    def fields(self) -> dict[str, Any]:
        self.reader.read_gpu()
        return self.__dict__["fields"]  # type: ignore[no-any-return]

    @fields.setter
    def fields(self, value: dict[str, Any]) -> None:
        self.__dict__["fields"] = value

    @property
    def items(self) -> tuple[Any, ...] | None:
        self.reader.read_gpu()
        return self.__dict__["items"]  # type: ignore[no-any-return]

    @items.setter
    def items(self, value: tuple[Any, ...] | None) -> None:
        self.__dict__["items"] = value

    __eq__ = Instance.__eq__
    __hash__ = Instance.__hash__


@dataclass(frozen=True, eq=False)
class EnumMember:
    """``AttentionType.DECODER``: a member of an enum class of the tree."""

    cls: PyClass
    name: str
    value: Value
    #: a ``str``/``int`` enum member: equal to its value and hashed like it
    plain: bool = False

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EnumMember):
            if self.plain and other.plain and self.cls is not other.cls:
                return bool(self.value == other.value)  # two str (or int) enums: as values
            return self.cls is other.cls and self.name == other.name
        return self.plain and type(other) in (str, int, float, bool) and self.value == other

    def __hash__(self) -> int:
        return hash(self.value) if self.plain else hash((id(self.cls), self.name))

    def __repr__(self) -> str:
        return f"{self.cls.name}.{self.name}"


@dataclass(frozen=True, eq=False)
class Builtin:
    """A builtin function or bound method, implemented by the evaluator."""

    name: str
    #: called as ``fn(interp, args, kwargs, node, path)``
    fn: Callable[..., Value]

    def __repr__(self) -> str:
        return f"<builtin {self.name}>"


@dataclass(frozen=True, eq=False)
class SuperProxy:
    """``super()`` inside a method: attribute lookup starts after ``start`` in the MRO."""

    start: PyClass
    target: Value


@dataclass(eq=False)
class Budget:
    """Steps and sizes one question may use; running out is :class:`Unknown`."""

    steps: int = 200_000
    depth: int = 0
    max_depth: int = 60

    def tick(self, node: ast.AST, path: str) -> None:
        self.steps -= 1
        if self.steps < 0:
            self.fail(node, path)

    def fail(self, node: ast.AST, path: str) -> NoReturn:
        """Out of steps at ``node`` (callers that charge the step inline)."""
        raise LimitExceeded("step budget exhausted", path, line_of(node))

    def spend(self, steps: int, where: tuple[str, int]) -> None:
        """Charge work proportional to a size, before the work is done."""
        self.steps -= steps
        if self.steps < 0:
            raise LimitExceeded("step budget exhausted", *where)
