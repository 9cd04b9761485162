"""What a model file passes to the attention layers it builds, read as written:
the attention classes it imports from vLLM's attention package, the keywords
its constructions pass (``sinks=``, ``per_layer_sliding_window=``,
``attn_type=``), and whether the registered class is a pooling model."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from sphinxext_attn.model.records import Location
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.vocab.paths import ATTENTION_LAYERS_PACKAGE

#: where vLLM's attention layer classes live (a model imports them from here)
ATTENTION_PACKAGE = ATTENTION_LAYERS_PACKAGE
#: vLLM's attention layer for encoder-only models (it asks with ENCODER_ONLY)
ENCODER_ONLY_CLASS = "EncoderOnlyAttention"


@dataclass(frozen=True)
class WindowSite:
    class_name: str
    method: ast.FunctionDef
    call: ast.Call
    value: ast.expr


@dataclass
class ModelFile:
    """The attention facts of one model module (each keyword with its first line)."""

    path: str
    #: attention class name -> the line of its first construction
    classes: dict[str, int] = field(default_factory=dict)
    #: keyword -> the line of its first use in an attention construction
    keywords: dict[str, int] = field(default_factory=dict)
    #: ``attn_type=AttentionType.X`` written literally -> X and its line
    attn_types: dict[str, int] = field(default_factory=dict)
    #: ``attn_type = AttentionType.X`` assignments in the file -> their lines
    assigned_attn_types: dict[str, int] = field(default_factory=dict)
    #: lines reading a config key by name (``config.layer_types``, ``getattr(config, "x")``)
    config_reads: dict[str, int] = field(default_factory=dict)
    pooling: Location | None = None
    #: the construction passing ``per_layer_sliding_window=``: its class, method,
    #: call and the keyword's value (evaluated per layer: :mod:`.layer_windows`)
    window_site: WindowSite | None = None

    def at(self, line: int) -> Location:
        return Location(self.path, line)


def _attention_names(module: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(ATTENTION_PACKAGE):
            names.update(a.asname or a.name for a in node.names if a.name.endswith("Attention"))
    return names


def _aliases(module: ast.Module, names: set[str]) -> set[str]:
    """Local names bound to an attention class (``attn_cls = A if x else B``)."""
    found: set[str] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            choices = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
            if isinstance(target, ast.Name) and all(
                isinstance(c, ast.Name) and c.id in names for c in choices
            ):
                found.add(target.id)
    return found


def _enum_member(node: ast.expr | None) -> str | None:
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "AttentionType"
    ):
        return node.attr
    return None


def read_model_file(tree: SourceTree, module: str, class_name: str) -> ModelFile | str:
    """The facts of ``module``; else why it cannot be read (a reason)."""
    path = tree.module_file(module)
    parsed = tree.parse(path) if path else None
    if path is None or parsed is None:
        return f"the model file of {module} cannot be read"
    facts = ModelFile(path)
    names = _attention_names(parsed)
    names |= _aliases(parsed, names)
    for node in ast.walk(parsed):
        if isinstance(node, ast.Call):
            _call(node, names, facts)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            member = _enum_member(node.value)
            if isinstance(target, ast.Name) and target.id == "attn_type" and member:
                facts.assigned_attn_types.setdefault(member, node.lineno)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "config":
                facts.config_reads.setdefault(node.attr, node.lineno)
        elif isinstance(node, ast.ClassDef) and node.name == class_name:
            facts.pooling = _pooling(node, path)
    facts.window_site = _window_site(parsed, names)
    return facts


def _window_site(module: ast.Module, names: set[str]) -> WindowSite | None:
    """The construction passing ``per_layer_sliding_window=``; where its value is a
    parameter of the constructing method, the construction of that class in this
    file that passes it (or, if none does, the parameter's default)."""
    site = _first_site(
        module,
        lambda call: isinstance(call.func, ast.Name) and call.func.id in names,
        "per_layer_sliding_window",
    )
    for _ in range(3):
        if site is None or not isinstance(site.value, ast.Name):
            return site
        param = site.value.id
        default = _default(site.method, param)
        if default is _NOT_A_PARAMETER:
            return site
        class_name = site.class_name
        outer = _first_site(
            module,
            lambda call, name=class_name: isinstance(call.func, ast.Name) and call.func.id == name,
            param,
        )
        if outer is None:
            value = default if isinstance(default, ast.expr) else ast.Constant(None)
            return WindowSite(site.class_name, site.method, site.call, value)
        site = outer
    return site


_NOT_A_PARAMETER = object()


def _default(method: ast.FunctionDef, name: str) -> object:
    args = method.args
    positional = [*args.posonlyargs, *args.args]
    defaults = dict(
        zip(
            [a.arg for a in positional][len(positional) - len(args.defaults) :],
            args.defaults,
            strict=True,
        )
    )
    defaults.update(
        {a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None}
    )
    if name not in {a.arg for a in (*positional, *args.kwonlyargs)}:
        return _NOT_A_PARAMETER
    return defaults.get(name)


def _first_site(module: ast.Module, matches: Any, keyword_name: str) -> WindowSite | None:
    for cls in (n for n in ast.walk(module) if isinstance(n, ast.ClassDef)):
        for method in cls.body:
            if not isinstance(method, ast.FunctionDef):
                continue
            for call in (n for n in ast.walk(method) if isinstance(n, ast.Call)):
                if matches(call):
                    for keyword in call.keywords:
                        if keyword.arg == keyword_name:
                            return WindowSite(cls.name, method, call, keyword.value)
    return None


def _call(node: ast.Call, names: set[str], facts: ModelFile) -> None:
    func = node.func
    called = func.id if isinstance(func, ast.Name) else None
    if (
        isinstance(func, ast.Name)
        and func.id == "getattr"
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        facts.config_reads.setdefault(node.args[1].value, node.lineno)
    if called is None or called not in names:
        return
    facts.classes.setdefault(called, node.lineno)
    for keyword in node.keywords:
        if keyword.arg is None:
            continue
        facts.keywords.setdefault(keyword.arg, keyword.value.lineno)
        member = _enum_member(keyword.value)
        if keyword.arg == "attn_type" and member:
            facts.attn_types.setdefault(member, keyword.value.lineno)


def _pooling(node: ast.ClassDef, path: str) -> Location | None:
    """``is_pooling_model = True`` in the registered class's own body."""
    for stmt in node.body:
        if (
            isinstance(stmt, ast.Assign | ast.AnnAssign)
            and isinstance(stmt.value, ast.Constant)
            and stmt.value.value is True
        ):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if any(isinstance(t, ast.Name) and t.id == "is_pooling_model" for t in targets):
                return Location(path, stmt.lineno)
    return None
