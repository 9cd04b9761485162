"""Class attributes set after the class statement, by the module that defines it.

``GroupShape.PER_TENSOR = GroupShape(-1, -1)`` or ``setattr(Cls, "x", v)`` at
module level runs at import, after the class body, so it wins over what the
body binds. A plain top-level ``Cls.x = value`` is evaluated (the last one);
one inside an ``if``/``try``/loop block, an augmented one or a ``setattr`` is
unknown, never skipped. Writes inside functions are not here: they happen when
the function runs (see ``Interpreter.class_writes``). Only the class's own
module is scanned; a write from another module is not seen.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Any

from sphinxext_attn.core.pyeval.chunks import ChunkError
from sphinxext_attn.core.pyeval.values import PyClass, Unknown

if TYPE_CHECKING:
    from sphinxext_attn.core.pyeval.interp import Interpreter
    from sphinxext_attn.core.pyeval.scope import ModuleScope

#: A top-level statement that may set an attribute of a name: ``Name.attr [op]= ...``,
#: ``setattr(Name, ...)`` or ``Name.attr.method(...)`` (it may change ``Name.attr``).
_TOP_SET = re.compile(
    r"[A-Za-z_][\w.]*\.\w+\s*(?::[^=\n]*)?(?:[-+*/|&^%@]|//|\*\*|>>|<<)?=(?!=)"
    r"|setattr\s*\(|[A-Za-z_]\w*\.\w+(?:\.\w+)+\s*\("
)
#: A module-level block (its statements run at import), and a line in it that may set.
_BLOCK = re.compile(r"(?:if|try|with|for|while|match|async\s+(?:with|for))\b")
_MAY_SET = re.compile(r"^[ \t]+(?:[A-Za-z_][\w.]*\.\w+\s*[-+*/|&^%@<>]*=(?!=)|.*setattr)", re.M)
_BLOCKS = (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)

#: (statement, attribute name or None for any, whether it is a plain top-level ``=``)
Setting = tuple[ast.stmt, str | None, bool]


def module_settings(module: ModuleScope) -> dict[str, list[Setting]]:
    """Owner name -> the module-level statements that set its attributes, in order."""
    found = module.settings
    if found is not None:
        return found
    found = module.settings = {}
    statements: list[ast.stmt] = []
    try:
        if module.chunks is not None:
            for chunk in module.chunks:
                text = chunk.text
                if _TOP_SET.match(text) or (_BLOCK.match(text) and _MAY_SET.search(text)):
                    statements += chunk.nodes()
            chunked = True
        else:
            chunked = False
    except ChunkError:
        chunked = False
    if not chunked:
        parsed = module.reparse()
        statements = list(parsed.body) if parsed is not None else []
    for stmt in statements:
        _collect(stmt, True, found)
    return found


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
        if isinstance(func, ast.Name) and func.id == "setattr" and args:
            if isinstance(args[0], ast.Name):
                name = args[1] if len(args) > 1 else None
                attr = name.value if isinstance(name, ast.Constant) else None
                found.setdefault(args[0].id, []).append((stmt, attr, False))
        elif isinstance(func, ast.Attribute):  # ``Cls.sizes.append(8)`` changes Cls.sizes
            root: ast.expr = func.value
            while isinstance(root, ast.Attribute) and isinstance(root.value, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Attribute) and isinstance(root.value, ast.Name):
                found.setdefault(root.value.id, []).append((stmt, root.attr, False))
    elif isinstance(stmt, (*_BLOCKS, ast.Match)):
        for child in _block_statements(stmt):
            if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                _collect(child, False, found)  # a def's body runs when called, not at import


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
    settings = module_settings(cls.module).get(cls.name)
    if not settings:
        return []
    return [s for s in settings if s[1] is None or s[1] == name]


def value_set(interp: Interpreter, cls: PyClass, settings: list[Setting]) -> Any:
    """The value the last module-level setting gives (only a plain ``Cls.x = v``)."""
    stmt, _, plain = settings[-1]
    if not plain or not isinstance(stmt, ast.Assign):
        raise Unknown(
            f"{cls.name} attribute set by module-level code not evaluated",
            cls.path,
            stmt.lineno,
        )
    return interp.eval(stmt.value, cls.module)
