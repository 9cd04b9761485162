"""Engine options checked against the release's own config classes, before any work.

An ``--option FIELD=VALUE`` is honoured only if ``VllmConfig`` (and the config
classes its fields are declared with) has that field, and the value is one the
field's annotation allows; anything else would be accepted and then silently
read as the default. The classes, their annotations and the ``Literal`` and
enum values are read from the tree's source (``vllm/config``); a type this
reading does not model accepts any value rather than reject a good one.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field

from sphinxext_attn.model.environment import MODEL_ATTN_TYPE, literal_of
from sphinxext_attn.pyeval import is_enum_member_name
from sphinxext_attn.source.classes import absolute_module
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.vocab.paths import CONFIG_MODULE

ROOT_CLASS = "VllmConfig"
ENUM_BASES = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"})
PLAIN_TYPES = {"int": "an integer", "float": "a number", "bool": "true or false", "str": "text"}
#: fields another flag sets, where setting them as an option is not honoured
OWN_FLAGS = {"attention_config.backend": "--backend (:backend: in a directive)"}
#: options the analysis itself defines (the model's attention type of a case)
ENGINE_OPTIONS = frozenset({MODEL_ATTN_TYPE})
MAX_HOPS = 12


class OptionError(ValueError):
    """An option the release's config does not have, or a value it does not allow."""


@dataclass
class FieldType:
    """What a field's annotation allows (``any``: a type this reading does not model)."""

    plain: set[str] = field(default_factory=set)
    literals: list[object] = field(default_factory=list)
    members: list[str] = field(default_factory=list)
    config: tuple[str, ast.ClassDef] | None = None
    any: bool = False

    def accepts(self, text: str) -> bool:
        value = literal_of(text)
        if self.any or (value is None and "None" in self.plain):
            return True
        if any(type(value) is type(v) and value == v for v in self.literals):
            return True
        if text.strip() in self.members:
            return True
        kind = type(value).__name__
        return kind in self.plain or (kind == "int" and bool(self.plain & {"float", "bool"}))

    def described(self) -> str:
        words = [PLAIN_TYPES[p] for p in sorted(self.plain) if p in PLAIN_TYPES]
        words += [", ".join(repr(v) if isinstance(v, str) else str(v) for v in self.literals)]
        words += [", ".join(self.members)]
        if "None" in self.plain:
            words.append("None")
        return " or ".join(w for w in words if w) or "no value an option can give"


class ConfigReader:
    """The config classes of one tree, found by following imports in its source."""

    def __init__(self, tree: SourceTree) -> None:
        self.tree = tree

    def module(self, dotted: str) -> tuple[str, ast.Module] | None:
        path = self.tree.module_file(dotted)
        parsed = self.tree.parse(path) if path else None
        return (path, parsed) if path and parsed is not None else None

    def binding(self, dotted: str, name: str, hops: int = 0) -> tuple[str, ast.AST] | None:
        """The statement that defines ``name`` in module ``dotted`` (a class or a
        module-level assignment), following ``from ... import`` chains."""
        found = self.module(dotted)
        if found is None or hops > MAX_HOPS:
            return None
        path, module = found
        for stmt in module.body:
            if isinstance(stmt, ast.ClassDef) and stmt.name == name:
                return path, stmt
            if isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in stmt.targets
            ):
                return path, stmt.value
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and stmt.target.id == name
            ):  # X: TypeAlias = Literal[...]
                return (path, stmt.value) if stmt.value is not None else None
        for stmt in module.body:
            if isinstance(stmt, ast.ImportFrom):
                for alias in stmt.names:
                    if (alias.asname or alias.name) == name:
                        source = absolute_module(path, stmt.module, stmt.level)
                        return self.binding(source, alias.name, hops + 1) if source else None
        return None

    def field_annotation(
        self, where: tuple[str, ast.ClassDef], name: str, hops: int = 0
    ) -> tuple[str, ast.expr] | None | bool:
        """The annotation of field ``name`` along the class and its bases in the tree;
        True when a base cannot be read (the field may be there)."""
        path, cls = where
        for stmt in cls.body:
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and stmt.target.id == name
            ):
                return path, stmt.annotation
        unread = False
        for base in cls.bases:
            if isinstance(base, ast.Name) and base.id in ("object", "ABC"):
                continue
            found = self.resolve(path, base) if hops < MAX_HOPS else None
            if found is None or not isinstance(found[1], ast.ClassDef):
                unread = True
                continue
            answer = self.field_annotation((found[0], found[1]), name, hops + 1)
            if answer:
                return answer
        return True if unread else None

    def resolve(self, path: str, node: ast.expr) -> tuple[str, ast.AST] | None:
        """A name used in ``path`` (``Name`` or ``module.Name``) to its definition."""
        if isinstance(node, ast.Name):
            return self.binding(_dotted(path), node.id)
        return None

    def field_type(self, path: str, node: ast.expr | None, hops: int = 0) -> FieldType:
        """What an annotation (or a type alias's value) allows."""
        kind = FieldType()
        if node is None or hops > MAX_HOPS:
            kind.any = True
            return kind
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                kind.any = True
                return kind
        if isinstance(node, ast.Constant) and node.value is None:
            kind.plain.add("None")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            for part in (node.left, node.right):
                _merge(kind, self.field_type(path, part, hops + 1))
        elif isinstance(node, ast.Subscript):
            head = _last_name(node.value)
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if head == "Literal":
                try:
                    kind.literals += [ast.literal_eval(i) for i in items]
                except ValueError:
                    kind.any = True
            elif head in ("Optional", "Union"):
                kind.plain.add("None") if head == "Optional" else None
                for item in items:
                    _merge(kind, self.field_type(path, item, hops + 1))
            elif head == "Annotated":
                _merge(kind, self.field_type(path, items[0], hops + 1))
            else:
                kind.any = True  # dict[...], list[...]: no option text is one
        elif isinstance(node, ast.Name) and node.id in (*PLAIN_TYPES, "None"):
            kind.plain.add(node.id)
        elif isinstance(node, ast.Name):
            found = self.resolve(path, node)
            if found is None:
                kind.any = True
            elif isinstance(found[1], ast.ClassDef):
                self._class_type(kind, found[0], found[1])
            elif isinstance(found[1], ast.expr):
                _merge(kind, self.field_type(found[0], found[1], hops + 1))
            else:
                kind.any = True
        else:
            kind.any = True
        return kind

    def _class_type(self, kind: FieldType, path: str, cls: ast.ClassDef) -> None:
        if any(_last_name(b) in ENUM_BASES for b in cls.bases):
            kind.members += [
                t.id
                for stmt in cls.body
                if isinstance(stmt, ast.Assign)
                for t in stmt.targets
                if isinstance(t, ast.Name) and is_enum_member_name(t.id, cls.name)
            ]
        else:
            kind.config = (path, cls)


def _merge(into: FieldType, part: FieldType) -> None:
    into.plain |= part.plain
    into.literals += part.literals
    into.members += part.members
    into.any = into.any or part.any
    into.config = into.config or part.config


def _last_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _dotted(path: str) -> str:
    dotted = path[: -len(".py")].replace("/", ".")
    return dotted[: -len(".__init__")] if dotted.endswith(".__init__") else dotted


def check_options(
    root: str,
    options: Mapping[str, str],
    what: str = "--option",
    tree: SourceTree | None = None,
) -> None:
    """Raise :class:`OptionError` (naming ``what``, the option and what is accepted)
    for the first option the tree's ``VllmConfig`` does not honour (``tree``: the
    build's parsed files, so none is read twice)."""
    if not options:
        return
    reader = ConfigReader(tree or SourceTree(root))
    top = reader.binding(CONFIG_MODULE, ROOT_CLASS)
    for name, text in options.items():
        if name in ENGINE_OPTIONS:
            continue
        if name in OWN_FLAGS:
            raise OptionError(
                f"{what} {name}={text}: the backend asked for is set with {OWN_FLAGS[name]}, "
                "not as an engine option"
            )
        if top is None or not isinstance(top[1], ast.ClassDef):
            raise OptionError(
                f"{what} {name}={text}: this tree has no {ROOT_CLASS} in {CONFIG_MODULE}, "
                "so no engine option can be set"
            )
        _check_one(reader, (top[0], top[1]), name, text, what)


def _check_one(
    reader: ConfigReader, top: tuple[str, ast.ClassDef], name: str, text: str, what: str
) -> None:
    where, walked = top, ROOT_CLASS
    parts = name.split(".")
    for i, part in enumerate(parts):
        found = reader.field_annotation(where, part)
        if found is True:
            return  # a base class the reading cannot follow may declare it
        if found is None or found is False:
            raise OptionError(
                f"{what} {name}={text}: {walked} has no field {part!r} "
                f"({_field_list(reader, where)})"
            )
        kind = reader.field_type(*found)
        last = i == len(parts) - 1
        if not last:
            if kind.config is None or kind.plain:
                raise OptionError(
                    f"{what} {name}={text}: {walked}.{part} is not a config class by "
                    "default (its annotation allows None or another type), so none of its "
                    "fields is read"
                )
            where, walked = kind.config, kind.config[1].name
            continue
        if kind.config is not None and not (kind.any or kind.plain or kind.literals):
            raise OptionError(
                f"{what} {name}={text}: {name} is a config ({kind.config[1].name}); set its "
                f"fields, {name}.FIELD=VALUE"
            )
        if not kind.accepts(text):
            raise OptionError(
                f"{what} {name}={text}: {text!r} is not a value of {name}; it accepts "
                f"{kind.described()}"
            )


def _field_list(reader: ConfigReader, where: tuple[str, ast.ClassDef]) -> str:
    names = [
        s.target.id
        for s in where[1].body
        if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
    ]
    shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
    return f"its fields: {shown}" if names else "it declares no fields"
