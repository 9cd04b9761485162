"""What a model file passes to the attention layers it builds, read as written:
the attention classes it imports from vLLM's attention package, the keywords
its constructions pass (``sinks=``, ``per_layer_sliding_window=``,
``attn_type=``), and whether the registered class is a pooling model."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from sphinxext_attn.model.records import Location
from sphinxext_attn.source.tree import SourceTree

#: where vLLM's attention layer classes live (a model imports them from here)
ATTENTION_PACKAGE = "vllm.model_executor.layers.attention"
#: vLLM's attention layer for encoder-only models (it asks with ENCODER_ONLY)
ENCODER_ONLY_CLASS = "EncoderOnlyAttention"


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
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        if node.value.id == "AttentionType":
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
    return facts


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
