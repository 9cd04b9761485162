"""Attribute access, comparisons and iteration of evaluated values (class members
and the method resolution order: :mod:`.members`)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval import abstract_str, ops, plain
from sphinxext_attn.pyeval.fields import frozen_field
from sphinxext_attn.pyeval.members import member_names as member_names  # the package's name
from sphinxext_attn.pyeval.members import outside_base, unmodelled
from sphinxext_attn.pyeval.scope import MISSING, ModuleScope
from sphinxext_attn.pyeval.values import (
    Bound,
    Builtin,
    Caught,
    EnumMember,
    External,
    Foreign,
    Instance,
    LazyGen,
    LimitExceeded,
    PyClass,
    PyFunction,
    Raised,
    SuperProxy,
    Unknown,
    Value,
    line_of,
)

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter


def cache_clear(func: PyFunction) -> Builtin:
    """``func.cache_clear`` of a ``functools.cache``/``lru_cache`` function of the tree."""

    def run(
        interp: Interpreter, args: list[Value], kwargs: dict[str, Value], node: ast.AST, path: str
    ) -> None:
        if args or kwargs:
            raise Raised("TypeError", "cache_clear() takes no arguments")
        interp.call_memo.forget(func)

    return Builtin(f"{func.name}.cache_clear", run)


def get_attr(interp: Interpreter, obj: Value, name: str, node: ast.AST, path: str) -> Value:
    if isinstance(obj, ModuleScope):
        return interp.module_attr(obj, name, node)
    if isinstance(obj, PyClass):
        return _class_getattr(interp, obj, name, node)
    if isinstance(obj, Instance):
        return _instance_getattr(interp, obj, name, node)
    if isinstance(obj, EnumMember):
        if name == "value":
            plain.check_not_auto(obj.value, (path, line_of(node)))
            return obj.value
        if name == "name":
            return obj.name
        value, _ = interp.class_attr(obj.cls, name)
        if value is MISSING:
            if obj.plain:  # a str/int enum's member is a str/int: its methods
                return get_attr(interp, obj.value, name, node, path)
            dunder = interp.defines(obj.cls, "__init__", "__new__")
            if dunder is not None:
                raise Unknown(
                    f"{obj.cls.name} members set up by {dunder} not evaluated",
                    path,
                    line_of(node),
                )
            raise Raised("AttributeError", name)
        return bind_member(interp, value, obj, obj.cls)
    if isinstance(obj, SuperProxy):
        target_cls = (
            obj.target if isinstance(obj.target, PyClass) else getattr(obj.target, "cls", None)
        )
        if not isinstance(target_cls, PyClass):
            raise Unknown("super() on an unknown object", path, line_of(node))
        value, _ = interp.class_attr(target_cls, name, after=obj.start)
        if value is MISSING:
            raise Unknown(f"super().{name} is outside the tree", path, line_of(node))
        return bind_member(interp, value, obj.target, target_cls)
    if isinstance(obj, External):
        return interp.world.external_attr(interp, obj, name)
    if isinstance(obj, Caught):
        raise Unknown(
            f"attribute {name} of a caught {obj.kind} not evaluated",
            path,
            line_of(node),
        )
    if isinstance(obj, Foreign):
        found = interp.world.foreign_attr(interp, obj, name, path)
        if found is not MISSING:
            return found
    if isinstance(obj, PyFunction) and name == "__name__":
        return obj.name
    if isinstance(obj, PyFunction) and obj.cached and name == "cache_clear":
        return cache_clear(obj)
    method = interp.primitive_method(obj, name, node, path)
    if method is not MISSING:
        return method
    if obj is None:
        raise Raised("AttributeError", f"'NoneType' object has no attribute {name!r}")
    raise Unknown(
        f"attribute {name} of {type(obj).__name__} not evaluated",
        path,
        line_of(node),
    )


def _class_getattr(interp: Interpreter, cls: PyClass, name: str, node: ast.AST) -> Value:
    value, _ = interp.class_attr(cls, name)
    if value is MISSING:
        if name in ("__name__", "__qualname__"):
            return cls.name
        if name == "__module__":
            return cls.module.dotted
        unmodelled(interp, cls, name, node)
        raise Raised("AttributeError", f"type object {cls.name!r} has no attribute {name!r}")
    return bind_member(interp, value, cls, cls)


def _instance_getattr(interp: Interpreter, inst: Instance, name: str, node: ast.AST) -> Value:
    if name in inst.fields:
        return inst.fields[name]
    if name == "_asdict" and inst.items is not None:
        return Builtin("_asdict", lambda *_: dict(inst.fields))
    value, _ = interp.class_attr(inst.cls, name)
    if value is MISSING:
        unmodelled(interp, inst.cls, name, node)
        outside = outside_base(interp, inst.cls, name)
        if outside:  # a named tuple's ``count``, an exception's ``args``
            line = line_of(node)
            raise Unknown(f"{inst.cls.name}.{name} may come from {outside}", inst.cls.path, line)
        if interp.defines(inst.cls, "__getattr__"):
            raise Unknown(
                f"{inst.cls.name}.__getattr__ not evaluated",
                inst.cls.path,
                line_of(node),
            )
        raise Raised("AttributeError", f"{inst.cls.name!r} object has no attribute {name!r}")
    if isinstance(value, PyFunction) and value.kind == "property":
        return interp.invoke(value, [inst], {}, node)
    return bind_member(interp, value, inst, inst.cls)


def bind_member(interp: Interpreter, value: Value, target: Value, cls: PyClass) -> Value:
    if isinstance(value, PyFunction):
        if value.kind == "classmethod":
            return Bound(value, cls)
        if value.kind == "function" and not isinstance(target, PyClass):
            return Bound(value, target)
        if value.kind == "property" and not isinstance(target, PyClass):
            return interp.invoke(value, [target], {}, value.node)
    return value


def set_attr(
    interp: Interpreter, obj: Value, name: str, value: Value, node: ast.AST, path: str
) -> None:
    if isinstance(obj, PyClass):
        obj.attrs[name] = value
        if obj.mro_cache is not None:
            # remembered answers may have read the old value; a class never
            # looked up along its MRO (one just built) was read by none
            interp.class_writes += 1
    elif isinstance(obj, Instance):
        if obj.items is not None:  # a named tuple's fields cannot be set
            raise Raised("AttributeError", "can't set attribute")
        if frozen_field(interp, obj, name):
            message = f"cannot assign to field {name!r}"
            raise Raised("FrozenInstanceError", message, bases=("AttributeError",))
        obj.fields[name] = value
        interp.mutated(obj, [value])
    else:
        raise Unknown(f"setting {name} not evaluated", path, line_of(node))


def set_item(
    interp: Interpreter, container: Value, key: Value, value: Value, node: ast.AST, path: str
) -> None:
    """``container[key] = value`` for a dict or a list (a slice sized first)."""
    interp.mutated(container, [key, value])
    if isinstance(container, dict):
        container[hashable(interp, key, node, path)] = value
        return
    if not isinstance(container, list):
        raise Unknown("item assignment not evaluated", path, line_of(node))
    if isinstance(key, slice):
        value = iterate(interp, value, node, path)
        if len(container) + len(value) > ops.MAX_ITEMS:
            raise LimitExceeded("sequence too long to evaluate", path, line_of(node), kind="size")
    try:
        container[key] = value
    except (TypeError, IndexError, ValueError) as exc:
        raise Raised(type(exc).__name__, str(exc)) from None


def subscript(interp: Interpreter, value: Value, index: Value, node: ast.AST, path: str) -> Value:
    abstract_str.concretize(value, index)
    if isinstance(value, External):
        return interp.world.external_subscript(interp, value, index)
    if isinstance(value, Instance) and value.items is not None:
        value = value.items
    if isinstance(value, PyClass) and interp.is_enum(value) and isinstance(index, str):
        member = interp.class_own_attr(value, index)
        if isinstance(member, EnumMember):
            return member
        raise Raised("KeyError", index)
    if isinstance(index, EnumMember) and index.plain and isinstance(index.value, int):
        index = index.value  # an IntEnum member indexes as its int
    if isinstance(value, list | tuple | str | dict | range):
        where = (path, line_of(node))
        try:
            if isinstance(value, dict):
                hashable(interp, index, node, path)  # an unhashable key: TypeError
                interp.budget.spend(1 + len(value), where)  # the key compared with each
                for key, item in value.items():
                    if ops.equal(key, index, interp.budget, where):
                        return item
                raise Raised("KeyError", ops.text(index, interp.budget, where))
            got = value[index]
            return ops.paid(got, interp.budget, where) if isinstance(index, slice) else got
        except (IndexError, TypeError, ValueError) as exc:
            raise Raised(type(exc).__name__, str(exc)) from None
    raise Unknown(f"subscript of {type(value).__name__} not evaluated", path, line_of(node))


def iterate(interp: Interpreter, value: Value, node: ast.AST, path: str) -> list[Value]:
    abstract_str.concretize(value)
    if isinstance(value, LazyGen):
        value = value.take()  # every item left (each evaluation is budgeted)
    if isinstance(value, Instance) and value.items is not None:
        return list(value.items)
    if isinstance(value, list | tuple | str | range | set | frozenset | dict):
        if len(value) > ops.MAX_ITEMS:
            raise LimitExceeded("sequence too long to evaluate", path, line_of(node), kind="size")
        ops.charge(interp.budget, 8 * len(value), (path, line_of(node)))
        return list(value)
    if isinstance(value, PyClass) and interp.is_enum(value):
        names = member_names(value, enum=True)
        members = [(n, interp.class_own_attr(value, n)) for n in names]
        # an alias (a later name of an earlier member's value) is not iterated
        return [m for n, m in members if isinstance(m, EnumMember) and m.name == n]
    raise Unknown(
        f"iteration over {type(value).__name__} not evaluated",
        path,
        line_of(node),
    )


def make_set(interp: Interpreter, items: list[Value], node: ast.AST, path: str) -> Value:
    where = (path, line_of(node))
    ops.weigh(items, interp.budget, where)
    ops.charge(interp.budget, 32 * len(items), where)
    try:
        return set(items)
    except TypeError:
        raise Unknown("set of unhashable values", *where) from None
    except Unknown as exc:  # an abstract value (see .abstract): its place is here
        raise Unknown(exc.reason, *where) from None


def hashable(interp: Interpreter, value: Value, node: ast.AST, path: str) -> Value:
    """``value`` as a dict key: its hash (a native walk) charged first."""
    ops.weigh(value, interp.budget, (path, line_of(node)))
    try:
        hash(value)
    except TypeError:
        raise Raised("TypeError", "unhashable type") from None
    except Unknown as exc:  # an abstract value (see .abstract): its place is here
        raise Unknown(exc.reason, path, line_of(node)) from None
    return value
