"""Class attributes set after the class statement, by the module that defines it.

``GroupShape.PER_TENSOR = GroupShape(-1, -1)`` or ``setattr(Cls, "x", v)`` at
module level runs at import, after the class body, so it wins over what the
body binds. A plain top-level ``Cls.x = value`` is evaluated (the last one);
one inside an ``if``/``try``/loop block, an augmented one, a ``setattr`` or a
call at import the class is passed to (``register(Cls)``: it may set any
attribute) is unknown, never skipped. Writes inside functions are not here: they
happen when the function runs (see ``Interpreter.class_writes``). Only the class's own
module is scanned; a write from another module is not seen.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from sphinxext_attn.pyeval.mutations import top_level_statements
from sphinxext_attn.pyeval.values import PyClass, Unknown, Value

if TYPE_CHECKING:
    from sphinxext_attn.pyeval.interp import Interpreter
    from sphinxext_attn.pyeval.scope import ModuleScope

_BLOCKS = (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)

#: (statement, attribute name or None for any, whether it is a plain top-level ``=``)
Setting = tuple[ast.stmt, str | None, bool]


def owner_settings(module: ModuleScope, owner: str) -> list[Setting]:
    """The module-level statements that set attributes of ``owner``, in order."""
    cache = module.settings
    if cache is None:
        cache = module.settings = {}
    if owner not in cache:
        found: dict[str, list[Setting]] = {}
        for stmt in top_level_statements(module, {owner}, skip_definitions=True):
            _collect(stmt, True, found)
        cache[owner] = found.get(owner, [])
    return cache[owner]


def _collect(stmt: ast.stmt, top: bool, found: dict[str, list[Setting]]) -> None:
    if isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        plain = top and isinstance(stmt, ast.Assign) and len(targets) == 1
        for target in targets:
            for sub in ast.walk(target):  # ``Cls.x.y = v``, ``Cls.x[0] = v``: Cls.x changes
                if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
                    exact = plain and sub is target
                    found.setdefault(sub.value.id, []).append((stmt, sub.attr, exact))
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func, args = stmt.value.func, stmt.value.args
        setattr_ = isinstance(func, ast.Name) and func.id == "setattr"
        if setattr_ and args and isinstance(args[0], ast.Name):  # that class's only
            name = args[1] if len(args) > 1 else None
            attr = (
                name.value
                if isinstance(name, ast.Constant) and isinstance(name.value, str)
                else None
            )
            found.setdefault(args[0].id, []).append((stmt, attr, False))
            return
        if isinstance(func, ast.Attribute):  # ``Cls.sizes.append(8)`` changes Cls.sizes
            root: ast.expr = func.value
            while isinstance(root, ast.Attribute) and isinstance(root.value, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Attribute) and isinstance(root.value, ast.Name):
                found.setdefault(root.value.id, []).append((stmt, root.attr, False))
        for passed in _passed(stmt.value):  # ``register(Cls)`` may set any attribute
            found.setdefault(passed, []).append((stmt, None, False))
    elif isinstance(stmt, (*_BLOCKS, ast.Match)):
        for child in _block_statements(stmt):
            if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                _collect(child, False, found)  # a def's body runs when called, not at import


def _passed(call: ast.Call) -> set[str]:
    """Names a call made at import passes on (``f(Cls)``, ``f([Cls])``, ``setattr(
    d[Cls], ...)``), not those it only reads an attribute of (``f(Cls.x)``)."""
    parts = [*call.args, *(k.value for k in call.keywords)]
    read = {id(n.value) for part in parts for n in ast.walk(part) if isinstance(n, ast.Attribute)}
    return {
        n.id
        for part in parts
        for n in ast.walk(part)
        if isinstance(n, ast.Name) and id(n) not in read
    }


def _block_statements(stmt: ast.stmt) -> list[ast.stmt]:
    out = [*getattr(stmt, "body", []), *getattr(stmt, "orelse", [])]
    out += getattr(stmt, "finalbody", [])
    for part in [*getattr(stmt, "handlers", []), *getattr(stmt, "cases", [])]:
        out += part.body
    return out


def set_after_class(interp: Interpreter, cls: PyClass, name: str) -> list[Setting]:
    """The settings of ``cls.name`` by the module-level code of ``cls``'s module."""
    if cls.scope is not cls.module:
        return []  # a class made by a call: no module-level name is bound to it
    settings = owner_settings(cls.module, cls.name)
    if not settings:
        return []
    return [s for s in settings if s[1] is None or s[1] == name]


def value_set(interp: Interpreter, cls: PyClass, settings: list[Setting]) -> Value:
    """The value the last module-level setting gives (only a plain ``Cls.x = v``)."""
    stmt, _, plain = settings[-1]
    if not plain or not isinstance(stmt, ast.Assign):
        raise Unknown(
            f"{cls.name} attribute set by module-level code not evaluated",
            cls.path,
            stmt.lineno,
        )
    return interp.eval(stmt.value, cls.module)
