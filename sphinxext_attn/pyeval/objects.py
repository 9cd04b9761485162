"""Attribute access, comparisons and iteration of evaluated values (class members
and the method resolution order: :mod:`.members`)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval import abstract, abstract_str, ops, plain
from sphinxext_attn.pyeval.fields import check_record_eq, frozen_field
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
            plain.check_not_auto(obj.value, (path, getattr(node, "lineno", 0)))
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
                    getattr(node, "lineno", 0),
                )
            raise Raised("AttributeError", name)
        return _bind(interp, value, obj, obj.cls)
    if isinstance(obj, SuperProxy):
        target_cls = (
            obj.target if isinstance(obj.target, PyClass) else getattr(obj.target, "cls", None)
        )
        if not isinstance(target_cls, PyClass):
            raise Unknown("super() on an unknown object", path, getattr(node, "lineno", 0))
        value, _ = interp.class_attr(target_cls, name, after=obj.start)
        if value is MISSING:
            raise Unknown(f"super().{name} is outside the tree", path, getattr(node, "lineno", 0))
        return _bind(interp, value, obj.target, target_cls)
    if isinstance(obj, External):
        return interp.world.external_attr(interp, obj, name)
    if isinstance(obj, Caught):
        raise Unknown(
            f"attribute {name} of a caught {obj.kind} not evaluated",
            path,
            getattr(node, "lineno", 0),
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
        getattr(node, "lineno", 0),
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
    return _bind(interp, value, cls, cls)


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
            line = getattr(node, "lineno", 0)
            raise Unknown(f"{inst.cls.name}.{name} may come from {outside}", inst.cls.path, line)
        if interp.defines(inst.cls, "__getattr__"):
            raise Unknown(
                f"{inst.cls.name}.__getattr__ not evaluated",
                inst.cls.path,
                getattr(node, "lineno", 0),
            )
        raise Raised("AttributeError", f"{inst.cls.name!r} object has no attribute {name!r}")
    if isinstance(value, PyFunction) and value.kind == "property":
        return interp.invoke(value, [inst], {}, node)
    return _bind(interp, value, inst, inst.cls)


def _bind(interp: Interpreter, value: Value, target: Value, cls: PyClass) -> Value:
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
        raise Unknown(f"setting {name} not evaluated", path, getattr(node, "lineno", 0))


def set_item(
    interp: Interpreter, container: Value, key: Value, value: Value, node: ast.AST, path: str
) -> None:
    """``container[key] = value`` for a dict or a list (a slice sized first)."""
    interp.mutated(container, [key, value])
    if isinstance(container, dict):
        container[hashable(interp, key, node, path)] = value
        return
    if not isinstance(container, list):
        raise Unknown("item assignment not evaluated", path, getattr(node, "lineno", 0))
    if isinstance(key, slice):
        value = iterate(interp, value, node, path)
        if len(container) + len(value) > ops.MAX_ITEMS:
            raise LimitExceeded(
                "sequence too long to evaluate", path, getattr(node, "lineno", 0), kind="size"
            )
    try:
        container[key] = value
    except (TypeError, IndexError, ValueError) as exc:
        raise Raised(type(exc).__name__, str(exc)) from None


def object_truth(interp: Interpreter, value: Value, node: ast.AST, path: str) -> bool:
    if isinstance(value, abstract.AbstractInt):
        return value.truth((path, getattr(node, "lineno", 0)))
    if type(value) is abstract_str.AbstractStr:
        return abstract_str.truth(value)
    if isinstance(value, Instance):
        if value.items is not None:
            return bool(value.items)
        for dunder in ("__bool__", "__len__"):
            method, _ = interp.class_attr(value.cls, dunder)
            if method is not MISSING:
                return bool(
                    interp.call(_bind(interp, method, value, value.cls), [], {}, node, path)
                )
        return True
    if isinstance(value, EnumMember):
        if interp.defines(value.cls, "__bool__"):
            raise Unknown(
                f"{value.cls.name}.__bool__ not evaluated", path, getattr(node, "lineno", 0)
            )
        return interp.truth(value.value, node, path) if value.plain else True
    if isinstance(value, Bound | Builtin | SuperProxy | Foreign | Caught | LazyGen):
        return True
    if isinstance(value, External):
        return interp.world.external_truth(value, node, path)
    raise Unknown(
        f"truth of {type(value).__name__} not evaluated", path, getattr(node, "lineno", 0)
    )


def enum_text(
    interp: Interpreter, member: EnumMember, conversion: int, spec: str, node: ast.AST, path: str
) -> str:
    """``str()``, ``repr()`` or an f-string field of an enum member; unknown where
    the enum defines its own, and for a format spec (its meaning changed between
    Python versions)."""
    where = (path, getattr(node, "lineno", 0))
    dunder = "__repr__" if conversion in (ord("r"), ord("a")) else "__str__"
    own = interp.defines(member.cls, dunder, "__format__")
    if own is not None:
        raise Unknown(f"{member.cls.name}.{own} not evaluated", *where)
    if spec:
        raise Unknown("format spec of an enum member not evaluated", *where)
    if dunder == "__str__":
        return plain.enum_str(member)
    if type(member.value) not in ops.SCALARS:
        raise Unknown(f"repr of {member.cls.name}.{member.name} not evaluated", *where)
    return f"<{member.cls.name}.{member.name}: {member.value!r}>"


def compare(
    interp: Interpreter, op: ast.cmpop, left: Value, right: Value, node: ast.AST, path: str
) -> bool:
    where = (path, getattr(node, "lineno", 0))
    if abstract_str.is_abstract(left) or abstract_str.is_abstract(right):
        return abstract_str.compare(op, left, right, where, interp.budget)
    if isinstance(left, External) or isinstance(right, External):
        answered = interp.world.compare(interp, op, left, right)
        if answered is not None:
            return answered
    if isinstance(op, ast.Is):
        return _same(left, right)
    if isinstance(op, ast.IsNot):
        return not _same(left, right)
    if isinstance(op, ast.In):
        return ops.contains(right, left, where, interp.budget)
    if isinstance(op, ast.NotIn):
        return not ops.contains(right, left, where, interp.budget)
    dunder = {
        ast.Eq: "__eq__",
        ast.NotEq: "__ne__",
        ast.Lt: "__lt__",
        ast.LtE: "__le__",
        ast.Gt: "__gt__",
        ast.GtE: "__ge__",
    }[type(op)]
    for obj, other, name in ((left, right, dunder), (right, left, _REFLECT[dunder])):
        if isinstance(obj, Instance) and not (obj.by_fields and name == "__eq__"):
            # (a dataclass's generated __eq__ is nearer than a base's own)
            method, _ = interp.class_attr(obj.cls, name)
            if method is not MISSING:
                result = interp.call(_bind(interp, method, obj, obj.cls), [other], {}, node, path)
                if not (
                    isinstance(result, External) and result.qualname == "builtins.NotImplemented"
                ):
                    return interp.truth(result, node, path)
    if isinstance(op, ast.Eq):
        if any(isinstance(v, Instance) and v.own_eq for v in (left, right)):
            return _same(left, right)  # its __eq__ returned NotImplemented: identity
        check_record_eq(left, right, where)
        return ops.equal(left, right, interp.budget, where)
    if isinstance(op, ast.NotEq):  # object.__ne__ inverts __eq__, user-defined or not
        return not compare(interp, ast.Eq(), left, right, node, path)
    return ops.order(op, left, right, where, interp.budget)


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
        where = (path, getattr(node, "lineno", 0))
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
    raise Unknown(
        f"subscript of {type(value).__name__} not evaluated", path, getattr(node, "lineno", 0)
    )


def iterate(interp: Interpreter, value: Value, node: ast.AST, path: str) -> list[Value]:
    abstract_str.concretize(value)
    if isinstance(value, LazyGen):
        value = value.take()  # every item left (each evaluation is budgeted)
    if isinstance(value, Instance) and value.items is not None:
        return list(value.items)
    if isinstance(value, list | tuple | str | range | set | frozenset | dict):
        if len(value) > ops.MAX_ITEMS:
            raise LimitExceeded(
                "sequence too long to evaluate", path, getattr(node, "lineno", 0), kind="size"
            )
        ops.charge(interp.budget, 8 * len(value), (path, getattr(node, "lineno", 0)))
        return list(value)
    if isinstance(value, PyClass) and interp.is_enum(value):
        names = member_names(value, enum=True)
        members = [(n, interp.class_own_attr(value, n)) for n in names]
        # an alias (a later name of an earlier member's value) is not iterated
        return [m for n, m in members if isinstance(m, EnumMember) and m.name == n]
    raise Unknown(
        f"iteration over {type(value).__name__} not evaluated",
        path,
        getattr(node, "lineno", 0),
    )


def make_set(interp: Interpreter, items: list[Value], node: ast.AST, path: str) -> Value:
    where = (path, getattr(node, "lineno", 0))
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
    ops.weigh(value, interp.budget, (path, getattr(node, "lineno", 0)))
    try:
        hash(value)
    except TypeError:
        raise Raised("TypeError", "unhashable type") from None
    except Unknown as exc:  # an abstract value (see .abstract): its place is here
        raise Unknown(exc.reason, path, getattr(node, "lineno", 0)) from None
    return value


_REFLECT = {
    "__eq__": "__eq__",
    "__ne__": "__ne__",
    "__lt__": "__gt__",
    "__le__": "__ge__",
    "__gt__": "__lt__",
    "__ge__": "__le__",
}


def _same(left: Value, right: Value) -> bool:
    if left is right:
        return True
    if isinstance(left, EnumMember) and isinstance(right, EnumMember):
        return left.cls is right.cls and left.name == right.name
    if isinstance(left, External) and isinstance(right, External):
        return left.qualname == right.qualname
    if isinstance(left, bool | type(None)) or isinstance(right, bool | type(None)):
        return left is right
    return False
