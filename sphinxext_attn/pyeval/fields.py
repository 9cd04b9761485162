"""The fields of the tree's named tuples and dataclasses (``DeviceCapability``,
``AttentionSelectorConfig``, ``MultipleOf``): what a call of the class binds.

A dataclass field may be declared with ``dataclasses.field(...)`` whose ``init=``,
``compare=`` and ``kw_only=`` are constants (``default=`` and ``default_factory=``
are expressions, evaluated when an instance is made); the ``_: KW_ONLY`` sentinel
and ``@dataclass(kw_only=True)`` make fields keyword-only. Anything else a class
statement would refuse, or that is not modelled, is unknown, never a guess."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval import ops
from sphinxext_attn.pyeval.members import class_mro
from sphinxext_attn.pyeval.scope import MISSING
from sphinxext_attn.pyeval.values import External, Instance, PyClass, Raised, Unknown, Value

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter


@dataclass(frozen=True)
class Field:
    """One field: its default (an expression, or a factory called per instance),
    whether ``__init__`` takes it, ``==`` compares it, it is keyword-only."""

    name: str
    #: the class whose body declares it (its defaults are evaluated there)
    owner: PyClass
    default: ast.expr | None = None
    factory: ast.expr | None = None
    init: bool = True
    compare: bool = True
    kw_only: bool = False

    @property
    def required(self) -> bool:
        return self.default is None and self.factory is None


#: in the order a call binds them
Fields = list[Field]

#: ``dataclasses.field`` keywords with no effect on what is evaluated
_IGNORED = frozenset({"repr", "hash", "metadata", "doc"})
_FLAGS = frozenset({"init", "compare", "kw_only"})


def record_fields(interp: Interpreter, cls: PyClass) -> Fields | None:
    """Fields of a named tuple or dataclass (annotated class-level names), else None.
    Read once per class (its statements and bases do not change), kept by the
    interpreter the class is of; a declaration not modelled is unknown each time."""
    known = interp.record_fields_found
    if cls in known:
        return known[cls]
    known[cls] = None
    if not (interp.is_namedtuple(cls) or is_dataclass(cls)):
        return None
    try:
        fields = _read_fields(interp, cls)
    except Unknown:  # read again next time (a limit met in one question is not kept)
        del known[cls]
        raise
    found = known[cls] = list(fields.values())
    return found


def _read_fields(interp: Interpreter, cls: PyClass) -> dict[str, Field]:
    fields: dict[str, Field] = {}
    namedtuple = interp.is_namedtuple(cls)
    for klass in reversed(class_mro(cls, interp)):
        if not isinstance(klass, PyClass) or not (namedtuple or is_dataclass(klass)):
            continue  # a plain base's annotations are no fields of a dataclass
        kw_only = not namedtuple and decorator_flag(klass, "kw_only", False)
        for stmt in klass.node.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            if "ClassVar" in ast.dump(stmt.annotation):
                continue
            where = (klass.path, stmt.lineno)
            if "InitVar" in ast.dump(stmt.annotation):
                raise Unknown("a dataclasses.InitVar field not evaluated", *where)
            if not namedtuple and _is_kw_only_sentinel(interp, klass, stmt.annotation, where):
                kw_only = True  # the names after it are keyword-only; it is no field
                continue
            name = stmt.target.id
            spec = None if namedtuple else _field_call(interp, klass, stmt.value, where)
            if spec is None:
                fields[name] = Field(name, klass, stmt.value, kw_only=kw_only)
            else:
                fields[name] = _from_field_call(name, klass, spec, kw_only, where)
    _check_order(cls, fields)
    return fields


def _is_kw_only_sentinel(
    interp: Interpreter, klass: PyClass, annotation: ast.expr, where: tuple[str, int]
) -> bool:
    """``_: KW_ONLY`` (or ``dataclasses.KW_ONLY``): the name resolved in the class's
    module; a quoted annotation naming it is not read."""
    if isinstance(annotation, ast.Constant) and "KW_ONLY" in str(annotation.value):
        raise Unknown("a quoted KW_ONLY annotation not evaluated", *where)
    last = getattr(annotation, "attr", getattr(annotation, "id", ""))
    if last != "KW_ONLY":
        return False
    found = _resolve(interp, klass, annotation, where)
    return isinstance(found, External) and found.qualname == "dataclasses.KW_ONLY"


def _resolve(interp: Interpreter, klass: PyClass, expr: ast.expr, where: tuple[str, int]) -> Value:
    try:
        return interp.eval(expr, interp.class_body_scope(klass))
    except Raised as exc:  # the class statement itself would raise
        raise Unknown(f"class {klass.name} raises {exc.kind} when made", *where) from None


def _field_call(
    interp: Interpreter, klass: PyClass, value: ast.expr | None, where: tuple[str, int]
) -> ast.Call | None:
    """The ``dataclasses.field(...)`` call declaring a field, or None."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name | ast.Attribute)):
        return None
    try:
        func = _resolve(interp, klass, value.func, where)
    except Unknown:
        # a default that is not known: evaluated (and unknown) when it is needed,
        # unless it may be ``field``
        if getattr(value.func, "attr", getattr(value.func, "id", "")) == "field":
            raise
        return None
    if isinstance(func, External) and func.qualname == "dataclasses.field":
        return value
    return None


def _from_field_call(
    name: str, klass: PyClass, call: ast.Call, kw_only: bool, where: tuple[str, int]
) -> Field:
    if call.args:
        raise Unknown("dataclasses.field() with positional arguments not evaluated", *where)
    default: ast.expr | None = None
    factory: ast.expr | None = None
    flags = {"init": True, "compare": True, "kw_only": kw_only}
    for kw in call.keywords:
        if kw.arg == "default":
            default = kw.value
        elif kw.arg == "default_factory":
            factory = kw.value
        elif kw.arg in _FLAGS:
            if not isinstance(kw.value, ast.Constant):
                raise Unknown(f"dataclasses.field({kw.arg}=...) not a constant", *where)
            flags[kw.arg] = bool(kw.value.value)
        elif kw.arg not in _IGNORED:
            raise Unknown(f"dataclasses.field({kw.arg or '**'}...) not evaluated", *where)
    if default is not None and factory is not None:
        raise Unknown(f"class {klass.name} raises ValueError when made", *where)
    return Field(name, klass, default, factory, **flags)


def _check_order(cls: PyClass, fields: dict[str, Field]) -> None:
    """A required positional parameter after one with a default: the class
    statement raises TypeError."""
    defaulted = False
    for f in fields.values():
        if f.init and not f.kw_only:
            if f.required and defaulted:
                raise Unknown(
                    f"class {cls.name} raises TypeError when made (field {f.name!r})",
                    f.owner.path,
                    f.owner.node.lineno,
                )
            defaulted = defaulted or not f.required


def _dataclass_decorator(cls: PyClass) -> ast.expr | None:
    for decorator in cls.node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "dataclass":
            return decorator
    return None


def is_dataclass(cls: PyClass) -> bool:
    return _dataclass_decorator(cls) is not None


def decorator_flag(cls: PyClass, keyword: str, default: bool) -> bool:
    """``@dataclass(keyword=...)`` of ``cls``, a constant taken as a truth value;
    another expression is unknown."""
    decorator = _dataclass_decorator(cls)
    if not isinstance(decorator, ast.Call):
        return default
    for kw in decorator.keywords:
        if kw.arg == keyword:
            if not isinstance(kw.value, ast.Constant):
                raise Unknown(f"@dataclass({keyword}=...) not a constant", cls.path, kw.lineno)
            return bool(kw.value.value)
    return default


def frozen_field(interp: Interpreter, inst: Instance, name: str) -> bool:
    """Whether ``inst.name = v`` raises FrozenInstanceError: the first ``__setattr__``
    along the MRO is a ``frozen=True`` dataclass's, which refuses its own instances
    any name and a subclass's instances the dataclass's fields. One the tree
    writes is not evaluated."""
    for klass in class_mro(inst.cls, interp):
        if not isinstance(klass, PyClass):
            continue
        if is_dataclass(klass) and decorator_flag(klass, "frozen", False):
            return inst.cls is klass or name in {
                f.name for f in record_fields(interp, klass) or []
            }
        if interp.class_own_attr(klass, "__setattr__") is not MISSING:
            raise Unknown(f"{klass.name}.__setattr__ not evaluated", klass.path, klass.node.lineno)
    return False


def dataclass_eq(cls: PyClass) -> bool:
    """A dataclass compares by its fields unless declared ``eq=False``."""
    return is_dataclass(cls) and decorator_flag(cls, "eq", True)


def record_instance(
    interp: Interpreter,
    cls: PyClass,
    values: dict[str, Value] | None = None,
    items: tuple[Value, ...] | None = None,
) -> Instance:
    """An instance of ``cls`` holding ``values`` (or a named tuple's ``items``),
    keeping what its ``==`` is (see :func:`.ops.equal`): the nearest ``__eq__``
    along the MRO is a class's own (``own_eq``), or generated by a dataclass
    (compares that dataclass's ``compare=True`` fields, and is evaluated only for
    an instance holding no other name), or none (identity)."""
    fields = values if values is not None else {}
    if items is not None:
        return Instance(cls, fields, items)
    for klass in class_mro(cls, interp):
        if not isinstance(klass, PyClass):
            break
        if interp.class_own_attr(klass, "__eq__") is not MISSING:
            return Instance(cls, fields, own_eq=True)
        if dataclass_eq(klass):
            declared = record_fields(interp, klass) or []
            compared = tuple(f.name for f in declared if f.compare)
            names = frozenset(f.name for f in declared)
            return Instance(cls, fields, None, True, compared, names)
    return Instance(cls, fields)


def check_record_eq(left: Value, right: Value, where: tuple[str, int]) -> None:
    """``left == right`` of two instances of one dataclass, ``left is right`` too:
    unknown as in :func:`.ops.equal` (the identity shortcut does not apply to a
    dataclass's ``__eq__`` on every Python version)."""
    both = isinstance(left, Instance) and isinstance(right, Instance)
    if both and left.by_fields and left.cls is right.cls:
        ops.check_compared(left, where)
        ops.check_compared(right, where)
