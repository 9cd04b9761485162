"""No code outside the evaluator replaces a method of a live ``Interpreter``: what
the selector's pass-through and the other askers need comes through the hooks the
evaluator offers (its observer, its questions), so a method seen in ``pyeval/`` is
the method that runs. Found by reading every module's AST: an assignment (or a
``setattr``) to an attribute named after one of the interpreter's methods."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import sphinxext_attn
from sphinxext_attn.pyeval import Interpreter

PACKAGE = Path(sphinxext_attn.__file__).resolve().parent
METHODS = frozenset(
    name
    for klass in inspect.getmro(Interpreter)
    for name, member in vars(klass).items()
    if inspect.isfunction(member) or isinstance(member, classmethod | staticmethod)
)


def method_assignments(package: Path, skip: str = "pyeval") -> list[str]:
    """``path:line attr`` for each assignment to an attribute named as a method."""
    found = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if rel.startswith(f"{skip}/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            # ``self.x = ...`` sets a field of the class being written, not a method
            # of an interpreter it was handed
            names = [
                t.attr
                for t in targets
                if isinstance(t, ast.Attribute)
                and not (isinstance(t.value, ast.Name) and t.value.id == "self")
            ]
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "setattr"
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
            ):
                names.append(str(node.args[1].value))
            found += [f"{rel}:{getattr(node, 'lineno', 0)} {n}" for n in names if n in METHODS]
    return found


def test_no_module_outside_the_evaluator_replaces_an_interpreter_method() -> None:
    assert "invoke" in METHODS and "call" in METHODS
    assert method_assignments(PACKAGE) == []


def test_a_replaced_method_is_found(tmp_path: Path) -> None:
    (tmp_path / "pyeval").mkdir()
    (tmp_path / "pyeval" / "own.py").write_text("interp.invoke = 1\n")  # its own: allowed
    (tmp_path / "m.py").write_text(
        "def f(interp, other):\n"
        "    saved = interp.invoke\n"
        "    interp.invoke = other\n"
        "    setattr(interp, 'call', other)\n"
        "    interp.budget = 3\n"  # a field, not a method
        "    return saved\n"
        "class Asker:\n"
        "    def __init__(self, interp):\n"
        "        self.call = None\n"  # its own field of that name
        "        self.interp = interp\n"
        "        self.interp.invoke = None\n"
    )
    assert method_assignments(tmp_path) == ["m.py:3 invoke", "m.py:4 call", "m.py:11 invoke"]
