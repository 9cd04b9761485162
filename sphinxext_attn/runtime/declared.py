"""Which cells a plugin's backend class declares itself.

A plugin class subclasses vLLM's ``AttentionBackend`` but often declares only its
name, builder, KV shape and block sizes. A cell it does not declare is answered by
vLLM's base class, a default vLLM assumes, not the plugin's statement: the row
says "not declared" and its note gives what vLLM then assumes. A cell is declared
when a class of the plugin package in the resolution order defines the question's
method or a name vLLM's base method reads (``supported_dtypes`` for
``supports_dtype``).
"""

from __future__ import annotations

import ast

from sphinxext_attn.model.columns import ASKED, COLUMN, Column
from sphinxext_attn.model.records import BackendFeatures
from sphinxext_attn.pyeval import NODE, Interpreter, PyClass, Raised, Unknown, class_mro

#: the text of a cell the plugin class does not declare
NOT_DECLARED = "not declared"
#: the names through which a method reads what its class declares
SELF_NAMES = frozenset({"cls", "self"})
#: methods every backend defines to run at all: defining them declares no capability
GIVEN_BY_EVERY_BACKEND = frozenset(
    {"get_name", "get_impl_cls", "get_builder_cls", "get_kv_cache_shape"}
)


def undeclared(interp: Interpreter, cls: PyClass, row: BackendFeatures) -> dict[str, str]:
    """Column title -> what vLLM assumes for it (the base class's answer), for the
    cells no class of a plugin package in ``cls``'s resolution order declares."""
    plugin_roots = interp.tree.plugin_roots
    mro = [c for c in class_mro(cls, interp) if isinstance(c, PyClass)]
    own = [c for c in mro if c.path.split("/", 1)[0] in plugin_roots]
    if not own:
        return {}
    defined = {name for c in own for name in _defined(c.node)}
    vllms = [c for c in mro if c not in own]
    impl_defined = _impl_defined(interp, cls)
    out: dict[str, str] = {}
    for column in ASKED:
        if column.title == "Compute Cap." or not hasattr(row, column.field):
            continue
        if column.impl_attribute:  # vLLM asks the impl class (DCP: can it return the LSE?)
            if column.question in defined or column.impl_attribute in impl_defined:
                continue
        elif defined & _consulted(column, vllms):
            continue
        out[column.title] = column.text(row)
    return out


def _impl_defined(interp: Interpreter, cls: PyClass) -> set[str]:
    """Names the plugin's classes among the impl class's resolution order define."""
    try:
        with interp.guarded():
            method = interp.getattr(cls, "get_impl_cls", NODE, "")
            impl = interp.call(method, [], {}, NODE, cls.path)
    except (Unknown, Raised):
        return set()
    if not isinstance(impl, PyClass):
        return set()
    roots = interp.tree.plugin_roots
    return {
        name
        for c in class_mro(impl, interp)
        if isinstance(c, PyClass) and c.path.split("/", 1)[0] in roots
        for name in _defined(c.node)
    }


def _consulted(column: Column, vllms: list[PyClass]) -> set[str]:
    """The question's method and the class names vLLM's method for it reads."""
    names = {column.question, column.field} - GIVEN_BY_EVERY_BACKEND
    for cls in vllms:
        for stmt in cls.node.body:
            if isinstance(stmt, ast.FunctionDef) and stmt.name == column.question:
                names |= {
                    n.attr
                    for n in ast.walk(stmt)
                    if isinstance(n, ast.Attribute)
                    and isinstance(n.value, ast.Name)
                    and n.value.id in SELF_NAMES
                    and n.attr not in GIVEN_BY_EVERY_BACKEND
                }
                return names
    return names


def _defined(node: ast.ClassDef) -> set[str]:
    names: set[str] = set()
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Assign):
            names |= {t.id for t in stmt.targets if isinstance(t, ast.Name)}
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            names.add(stmt.target.id)
    return names


def note_undeclared(row: BackendFeatures, cells: dict[str, str]) -> BackendFeatures:
    """``row`` with each undeclared cell marked and its note saying what vLLM assumes."""
    if not cells:
        return row
    notes = dict(row.notes)
    for title, assumed in cells.items():
        shown = assumed or COLUMN[title].text(row)
        notes[title] = (
            f"{NOT_DECLARED} by the plugin's class; vLLM then assumes its base class's "
            f"answer: {shown}"
        )
    row.undeclared.update(cells)
    row.notes.clear()
    row.notes.update(notes)
    return row


#: the builder's class attribute vLLM reads for CUDA-graph support
CUDAGRAPH_ATTRIBUTE = "_cudagraph_support"


def builder_cudagraph(interp: Interpreter, cls: PyClass) -> str:
    """The CUDA-graph support the backend's metadata builder declares
    (``get_builder_cls()._cudagraph_support``: ``ALWAYS``, ``UNIFORM_BATCH``, ...),
    "not declared" when no class of the plugin in the builder's resolution order
    sets it; "" when the builder cannot be read."""
    try:
        with interp.guarded():
            method = interp.getattr(cls, "get_builder_cls", NODE, "")
            builder = interp.call(method, [], {}, NODE, cls.path)
            if not isinstance(builder, PyClass):
                return ""
            value = interp.getattr(builder, CUDAGRAPH_ATTRIBUTE, NODE, "")
    except (Unknown, Raised):
        return ""
    roots = interp.tree.plugin_roots
    declared = any(
        CUDAGRAPH_ATTRIBUTE in _defined(c.node)
        for c in class_mro(builder, interp)
        if isinstance(c, PyClass) and c.path.split("/", 1)[0] in roots
    )
    shown = getattr(value, "name", None) or str(value)
    return f"{shown} ({builder.name})" if declared else f"{NOT_DECLARED} ({builder.name})"
