"""What a value's own special methods answer: its truth (``__bool__``, ``__len__``),
rich comparisons (``__eq__`` and the rest, reflected as CPython does) and the text of
an enum member. Apart from :mod:`.objects` because each may call back into code
of the tree, and CPython's checks on what that code returns belong in one place."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval import abstract, abstract_str, ops, plain
from sphinxext_attn.pyeval.fields import check_record_eq
from sphinxext_attn.pyeval.objects import bind_member
from sphinxext_attn.pyeval.scope import MISSING
from sphinxext_attn.pyeval.values import (
    Bound,
    Builtin,
    Caught,
    EnumMember,
    External,
    Foreign,
    Instance,
    LazyGen,
    Raised,
    SuperProxy,
    Unknown,
    Value,
    line_of,
)

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter


def object_truth(interp: Interpreter, value: Value, node: ast.AST, path: str) -> bool:
    if isinstance(value, abstract.AbstractInt):
        return value.truth((path, line_of(node)))
    if type(value) is abstract_str.AbstractStr:
        return abstract_str.truth(value)
    if isinstance(value, Instance):
        if value.items is not None:
            return bool(value.items)
        for dunder in ("__bool__", "__len__"):
            method, _ = interp.class_attr(value.cls, dunder)
            if method is not MISSING:
                bound = bind_member(interp, method, value, value.cls)
                return _own_truth(dunder, interp.call(bound, [], {}, node, path), node, path)
        return True
    if isinstance(value, EnumMember):
        if interp.defines(value.cls, "__bool__"):
            raise Unknown(f"{value.cls.name}.__bool__ not evaluated", path, line_of(node))
        return interp.truth(value.value, node, path) if value.plain else True
    if isinstance(value, Bound | Builtin | SuperProxy | Foreign | Caught | LazyGen):
        return True
    if isinstance(value, External):
        return interp.world.external_truth(value, node, path)
    raise Unknown(f"truth of {type(value).__name__} not evaluated", path, line_of(node))


def _own_truth(dunder: str, result: Value, node: ast.AST, path: str) -> bool:
    """What CPython makes of a class's own ``__bool__`` or ``__len__`` result: a bool,
    or a length that is a non-negative int; anything else raises."""
    if isinstance(result, abstract.AbstractInt):  # (a bool is no AbstractInt)
        if dunder == "__bool__":
            raise Raised("TypeError", "__bool__ should return bool, returned int")
        return result.truth((path, line_of(node)))
    kind = result.cls.name if isinstance(result, Instance) else type(result).__name__
    if dunder == "__bool__":
        if type(result) is not bool:
            raise Raised("TypeError", f"__bool__ should return bool, returned {kind}")
        return result
    if not isinstance(result, int):
        raise Raised("TypeError", f"'{kind}' object cannot be interpreted as an integer")
    if result < 0:
        raise Raised("ValueError", "__len__() should return >= 0")
    return result != 0


def enum_text(
    interp: Interpreter, member: EnumMember, conversion: int, spec: str, node: ast.AST, path: str
) -> str:
    """``str()``, ``repr()`` or an f-string field of an enum member; unknown where
    the enum defines its own, and for a format spec (its meaning changed between
    Python versions)."""
    where = (path, line_of(node))
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
) -> Value:
    """``left op right``: a bool, or whatever a class's own rich comparison returned."""
    where = (path, line_of(node))
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
                bound = bind_member(interp, method, obj, obj.cls)
                result = interp.call(bound, [other], {}, node, path)
                if not (
                    isinstance(result, External) and result.qualname == "builtins.NotImplemented"
                ):
                    return result
    if isinstance(op, ast.Eq):
        if any(isinstance(v, Instance) and v.own_eq for v in (left, right)):
            return _same(left, right)  # its __eq__ returned NotImplemented: identity
        check_record_eq(left, right, where)
        return ops.equal(left, right, interp.budget, where)
    if isinstance(op, ast.NotEq):  # object.__ne__ inverts __eq__, user-defined or not
        return not interp.truth(compare(interp, ast.Eq(), left, right, node, path), node, path)
    return ops.order(op, left, right, where, interp.budget)


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
